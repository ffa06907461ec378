package recording

import (
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
