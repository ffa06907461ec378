package recording

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// A recording killed mid-line leaves its last line cut short: the
// session reads up to the last whole line, and says which line it left
// out. A line cut short in the middle of a file is damage, named with
// its file:line, and so is a line with more after its JSON object.
func TestReadCutLastLine(t *testing.T) {
	whole := gapSession(t)
	lines := strings.Count(whole, "\n")
	for _, cut := range []int{1, 20, len(`{"kind":"end","at":"7s","error":"--for 7s passed"}`) - 1} {
		text := whole[:len(whole)-1-cut] // without the last newline, and cut bytes of the end line
		s, err := Read(strings.NewReader(text), "cut.jsonl")
		if err != nil {
			t.Fatalf("cut %d bytes: %v", cut, err)
		}
		if s.Cut != lines || s.Len() != lines-1 {
			t.Errorf("cut %d bytes: Cut %d, Len %d; want %d, %d", cut, s.Cut, s.Len(), lines, lines-1)
		}
		if got := s.Lines[len(s.Lines)-1].Kind; got != KindEvent {
			t.Errorf("cut %d bytes: the last line read is a %s line, want the event before the cut end line", cut, got)
		}
	}
	if s, err := Read(strings.NewReader(whole), "whole.jsonl"); err != nil || s.Cut != 0 || s.Len() != lines {
		t.Errorf("the whole session: Cut %d, Len %d, %v; want 0, %d", s.Cut, s.Len(), err, lines)
	}

	ls := strings.SplitAfter(whole, "\n")
	ls[4] = ls[4][:30] + "\n" // line 5, cut, with lines after it
	if _, err := Read(strings.NewReader(strings.Join(ls, "")), "mid.jsonl"); err == nil ||
		!strings.HasPrefix(err.Error(), "mid.jsonl:5: not a session line: it is cut short (unexpected EOF), and is not the file's last line") {
		t.Errorf("a line cut short in the middle: %v", err)
	}
	ls = strings.SplitAfter(whole, "\n")
	ls[4] = strings.TrimSuffix(ls[4], "\n") + `{"kind":"end"}` + "\n"
	if _, err := Read(strings.NewReader(strings.Join(ls, "")), "two.jsonl"); err == nil ||
		!strings.HasPrefix(err.Error(), "two.jsonl:5: not a session line: more after its JSON object") {
		t.Errorf("two objects on a line: %v", err)
	}
}

// Every line a session cannot hold is refused with its file:line: a
// line the format does not know, and a line that contradicts the lines
// before it (check.go).
func TestReadRefuses(t *testing.T) {
	head := `{"kind":"session","at":"0s","version":1,"resource":"pods"}` + "\n"
	// listed: a LIST at rv 100 (line 2) and a watch from it (line 3).
	listed := head + `{"kind":"list","at":"0s","listRV":"100","items":[{"metadata":{"name":"a","namespace":"ns0","resourceVersion":"90"}}]}` + "\n" +
		`{"kind":"watch","at":"0s","watch":1,"resourceVersion":"100"}` + "\n"
	ev := func(at string, watch int, typ, rv string) string {
		return fmt.Sprintf(`{"kind":"event","at":%q,"watch":%d,"type":%q,"object":{"metadata":{"name":"x","namespace":"ns0","resourceVersion":%s}}}`, at, watch, typ, rv) + "\n"
	}
	for _, tt := range []struct{ text, want string }{
		{"", "s.jsonl: recording: not a session file"},
		{"create ns0/a\n", "s.jsonl:1: recording: not a session file"},
		{`{"record":"header","schema":2,"header":{}}`, "s.jsonl:1: recording: this is a trace (cachelab run --output json), not a session (cachelab record)"},
		{"# cachelab 0.5.0 vs client-go v0.37.2 · scenario a\n", "s.jsonl:1: recording: not a session file (its first line is not {\"kind\":\"session\",...}): it is a text trace (cachelab run)"},
		{`{"kind":"session","version":2,"resource":"pods","at":"0s"}`, "s.jsonl:1: session format version 2; this cachelab reads version 1"},
		{`{"kind":"session","version":1,"resource":"services","at":"0s"}`, `s.jsonl:1: the session recorded "services"; cachelab replays pods, configmaps, secrets and deployments`},
		{head + `{"kind":"telegram","at":"1s"}`, `s.jsonl:2: unknown kind "telegram"`},
		{`{"kind":"session","version":1,"resource":"pods","at":"0s","namespace":"ns0\nstart"}`, `s.jsonl:1: the session line's namespace "ns0\nstart" is not a namespace's name`},
		{`{"kind":"session","version":1,"resource":"pods","at":"0s","labels":"a in (b"}`, `s.jsonl:1: the session line's labels "a in (b" are not a label selector`},
		{head + `{"kind":"event","at":"-1s"}`, "s.jsonl:2: not a session line: duration -1s is negative"},
		{listed + `{"kind":"event","at":"1s","watch":1,"type":"ADDED"}`, "s.jsonl:4: event's object is missing"},
		{listed + `{"kind":"event","at":"1s","watch":1,"type":"ADDED","object":{"metadata":{"name":"a"}}}`, "s.jsonl:4: event's object has no metadata.resourceVersion"},
		{head + `{"kind":"end","at":"1s","extra":1}`, `s.jsonl:2: not a session line: json: unknown field "extra"`},
		{head + head, "s.jsonl:2: a second session line"},
		{head + `{"kind":"end","at":"4s"}` + "\n" + `{"kind":"watch-end","at":"4s","watch":1}`, "s.jsonl:3: a watch-end line after the end line (line 2)"},
		{head + `{"kind":"list","at":"1s","listRV":"abc"}`, `s.jsonl:2: the list's resourceVersion "abc" is not a number`},

		// Watches: their events come after them, while they are open.
		{listed + ev("1s", 7, "ADDED", `"101"`), "s.jsonl:4: an event of watch 7, which no line before it opens"},
		{head + `{"kind":"list","at":"0s","listRV":"100"}` + "\n" + ev("1s", 2, "ADDED", `"101"`) + `{"kind":"watch","at":"2s","watch":2,"resourceVersion":"100"}`,
			"s.jsonl:3: an event of watch 2, which no line before it opens"},
		{listed + `{"kind":"watch-end","at":"1s","watch":1}` + "\n" + ev("2s", 1, "ADDED", `"101"`), "s.jsonl:5: an event of watch 1 after its watch-end (line 4)"},
		{listed + `{"kind":"event","at":"1s","watch":1,"type":"ERROR","object":{"kind":"Status","code":410}}` + "\n" + ev("2s", 1, "ADDED", `"101"`),
			"s.jsonl:5: an event of watch 1 after its ERROR (line 4)"},
		{head + `{"kind":"watch","at":"0s","watch":1,"error":"500 InternalError: no"}` + "\n" + ev("1s", 1, "ADDED", `"101"`),
			"s.jsonl:3: an event of watch 1, whose WATCH failed (line 2)"},
		{listed + `{"kind":"watch","at":"1s","watch":1}`, "s.jsonl:4: watch 1 opened a second time (first at line 3)"},
		{listed + `{"kind":"watch-end","at":"1s","watch":1}` + "\n" + `{"kind":"watch-end","at":"1s","watch":1}`, "s.jsonl:5: a second watch-end of watch 1 (the first at line 4)"},
		{head + `{"kind":"watch","at":"0s","watch":1}` + "\n" + ev("1s", 1, "ADDED", `"101"`), "s.jsonl:3: an ADDED event of watch 1 before any LIST or watch-list"},

		// Event types, and what objects hold.
		{listed + ev("1s", 1, "EXPLODED", `"101"`), `s.jsonl:4: unknown event type "EXPLODED" (want one of ADDED, MODIFIED, DELETED, BOOKMARK, ERROR)`},
		{listed + ev("1s", 1, "ADDED", `101`), "s.jsonl:4: event's object: metadata.resourceVersion is a number, not a string (write it in quotes)"},
		{listed + `{"kind":"event","at":"1s","watch":1,"type":"ADDED","object":{"metadata":{"name":"x","resourceVersion":"101","labels":{"app":5}}}}`,
			`s.jsonl:4: event's object: metadata.labels["app"] is a number, not a string`},
		{listed + `{"kind":"event","at":"1s","watch":1,"type":"ADDED","object":{"metadata":{"name":"x","resourceVersion":"101","labels":"app=web"}}}`,
			`s.jsonl:4: event's object: metadata.labels is a string, not a map of strings`},
		{head + `{"kind":"list","at":"0s","listRV":"100","items":[{"metadata":{"name":7,"resourceVersion":"90"}}]}`,
			"s.jsonl:2: the list's item 1: metadata.name is a number, not a string"},
		{head + `{"kind":"watch","at":"0s","watch":1,"sendInitialEvents":true}` + "\n" + ev("1s", 1, "MODIFIED", `"101"`),
			"s.jsonl:3: a MODIFIED event among watch 1's initial events"},

		// resourceVersions never go back.
		{listed + ev("1s", 1, "ADDED", `"110"`) + ev("2s", 1, "ADDED", `"105"`), "s.jsonl:5: watch 1's ADDED event at rv 105 goes back from its event at rv 110 (line 4)"},
		{listed + ev("1s", 1, "ADDED", `"100"`), "s.jsonl:4: watch 1's ADDED event at rv 100, though it watches from rv 100"},
		{listed + ev("1s", 1, "ADDED", `"110"`) + `{"kind":"watch","at":"2s","watch":2,"resourceVersion":"0"}` + "\n" + ev("3s", 2, "ADDED", `"105"`),
			"s.jsonl:6: an ADDED event at rv 105, older than rv 110, which the recording had reached at line 4"},
		{listed + ev("1s", 1, "BOOKMARK", `"110"`) + `{"kind":"list","at":"2s","listRV":"104"}`,
			"s.jsonl:5: a LIST at rv 104, older than rv 110, which the recording had reached at line 4"},
		{head + `{"kind":"list","at":"0s","listRV":"100","items":[{"metadata":{"name":"a","resourceVersion":"120"}}]}`,
			"s.jsonl:2: the list's item a is at rv 120, newer than the LIST's own rv 100"},
		{head + `{"kind":"watch","at":"0s","watch":1,"sendInitialEvents":true}` + "\n" + ev("0s", 1, "ADDED", `"95"`) +
			`{"kind":"event","at":"0s","watch":1,"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"90","annotations":{"k8s.io/initial-events-end":"true"}}}}`,
			"s.jsonl:4: the bookmark that ends watch 1's initial events is at rv 90, older than its initial event at rv 95 (line 3)"},

		// The cache lines come when the recording has ended.
		{listed + `{"kind":"cache","at":"1s","object":{"metadata":{"name":"a","resourceVersion":"90"}}}` + "\n" + ev("2s", 1, "ADDED", `"101"`),
			"s.jsonl:5: an event line after the cache lines (line 4)"},
	} {
		_, err := Read(strings.NewReader(tt.text), "s.jsonl")
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%s\ngot  %v\nwant %s...", tt.text, err, tt.want)
		}
	}
}

// A session holds at most MaxLines lines and MaxSize bytes: one over is
// refused at the line that passes the limit, with what to do instead.
func TestReadLimits(t *testing.T) {
	head := `{"kind":"session","at":"0s","version":1,"resource":"pods"}` + "\n"
	lines := head + strings.Repeat(`{"kind":"request","at":"0s"}`+"\n", MaxLines-1)
	if s, err := Read(strings.NewReader(lines), "s.jsonl"); err != nil || s.Len() != MaxLines {
		t.Fatalf("a session of %d lines: %v", MaxLines, err)
	}
	_, err := Read(strings.NewReader(lines+`{"kind":"end","at":"0s"}`+"\n"), "s.jsonl")
	if want := "s.jsonl:100001: the session passes 100000 lines, the most a session may hold: record a shorter span (--for) or fewer pods (-n, -l)"; err == nil || err.Error() != want {
		t.Errorf("a session of %d lines: %v, want %s", MaxLines+1, err, want)
	}
	long := `{"kind":"request","at":"0s","uri":"/` + strings.Repeat("x", MaxSize) + `"}` + "\n"
	_, err = Read(strings.NewReader(head+long), "s.jsonl")
	if want := "s.jsonl:2: the session passes 33554432 bytes (32 MiB), the most a session may hold: "; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("a session of more than %d bytes: %v, want %s...", MaxSize, err, want)
	}
}

// ReadContext stops between two lines once its context ends, and says
// where: here the reader's context ends once it has handed over the
// first 4 KiB of a long session.
func TestReadContextStops(t *testing.T) {
	text := `{"kind":"session","at":"0s","version":1,"resource":"pods"}` + "\n" + strings.Repeat(`{"kind":"request","at":"0s"}`+"\n", 50_000)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	why := errors.New("a signal")
	r := &cancelAfter{r: strings.NewReader(text), left: 4096, cancel: func() { cancel(why) }}
	_, err := ReadContext(ctx, r, "s.jsonl")
	var se *StoppedError
	if !errors.As(err, &se) || !errors.Is(err, why) || se.Line < 2 || se.Line > 50_000 {
		t.Fatalf("ReadContext stopped with %v, want a StoppedError in the middle of the file", err)
	}
}

// cancelAfter is a reader that calls cancel once it has handed over
// left bytes.
type cancelAfter struct {
	r      io.Reader
	left   int
	cancel func()
}

func (c *cancelAfter) Read(b []byte) (int, error) {
	if c.left <= 0 {
		c.cancel()
	}
	n, err := c.r.Read(b[:min(len(b), max(c.left, 1))])
	c.left -= n
	return n, err
}
