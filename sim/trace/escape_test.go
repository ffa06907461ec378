package trace

import (
	"bytes"
	"encoding/json"
	"testing"
)

// Escape writes what a terminal would act on as Go writes it in a quoted
// string, and leaves everything else as it is.
func TestEscape(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"ns0/a@90", "ns0/a@90"},
		{"ns0/café → ok…", "ns0/café → ok…"},
		{"a\x1b[2J\x1b]0;title\a", `a\x1b[2J\x1b]0;title\a`},
		{"b\nhandler/h1 forged\r\t", `b\nhandler/h1 forged\r\t`},
		{"c\u009b31m\u202edesrever\x7f", `c\u009b31m\u202edesrever\x7f`},
		{"d\xff\xfe", `d\xff\xfe`},
	} {
		if got := Escape(tt.in); got != tt.want {
			t.Errorf("Escape(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
	if got, want := EscapeLines("one\x1b\ntwo\a"), "one\\x1b\ntwo\\a"; got != want {
		t.Errorf("EscapeLines = %q, want %q", got, want)
	}
}

// JSON records keep every character, and hold none a terminal acts on:
// the C1 and bidirectional controls encoding/json leaves are \u escapes.
func TestJSONWriterEscapesControls(t *testing.T) {
	var b bytes.Buffer
	key := "ns0/a\x1b[2J\u009b\u202e\n"
	j := NewJSONWriter(&b, Cachelab)
	if err := j.Step(StepResult{Index: 1, Cmd: "start", Sides: map[string][]Event{Cachelab: {{Layer: LayerIndexer, Kind: KindStore, Op: "add", Key: key, Detail: key}}}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range b.Bytes() {
		if c < 0x20 && c != '\n' || c == 0x7f {
			t.Fatalf("a control byte %#x in the JSON: %q", c, b.String())
		}
	}
	if bytes.Contains(b.Bytes(), []byte("\u009b")) || bytes.Contains(b.Bytes(), []byte("\u202e")) {
		t.Fatalf("a C1 or bidirectional control as it is in the JSON: %q", b.String())
	}
	line, _, _ := bytes.Cut(b.Bytes(), []byte("\n"))
	var rec Event // an event record holds the event's fields inline
	if err := json.Unmarshal(line, &rec); err != nil || rec.Key != key {
		t.Errorf("the record reads back as key %q, %v; want %q", rec.Key, err, key)
	}
}
