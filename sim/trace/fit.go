package trace

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// --- fitting a text trace to a person ---
//
// A step of a 10,000-object run has tens of thousands of lines, most of
// them the same line about another object; a narrow terminal breaks long
// lines wherever its edge falls. Both fixes below change only what is
// shown: StepOutput, which a scenario file's expected output is compared
// with and --rewrite writes, never summarizes or wraps.

// SummaryHead is how many lines of a summarized group are shown before
// the line that counts the rest.
const SummaryHead = 5

// Shape is what makes a line like another, for folding many lines into
// a count: its layer, kind, operation, watch, handler, batch and marks,
// whether it changes the resourceVersion, and its words with its own
// object's name and every number taken out. Lines of one shape say the
// same thing of other objects: 4,999 ADDED lines are alike, the BOOKMARK
// that ends them is not, and neither is the one real update among
// thousands of no-op ones. A tombstone's line has a shape of its own
// (its object is the news), so it is never folded.
func Shape(e Event) string {
	d := e.Detail
	if e.Key != "" {
		d = strings.ReplaceAll(d, e.Key, "\x01")
	}
	var b strings.Builder
	b.Grow(len(e.Layer) + len(d) + 32)
	for _, f := range []string{e.Layer, string(e.Kind), e.Op, e.Watch, e.Handler, string(e.Order)} {
		b.WriteString(f)
		b.WriteByte(0)
	}
	if e.Initial {
		b.WriteString("initial\x00")
	}
	if e.RV != "" && e.RV == e.PrevRV {
		b.WriteString("same rv\x00")
	}
	if e.Order == OrderTombstones {
		b.WriteString(e.Key + "\x00")
	}
	digits := false
	for i := 0; i < len(d); i++ {
		c := d[i]
		if c >= '0' && c <= '9' {
			if !digits {
				b.WriteByte('#')
			}
			digits = true
			continue
		}
		digits = false
		b.WriteByte(c)
	}
	return b.String()
}

// summarize returns the rows to print for events: every event, unless a
// group of alike lines (one Shape) has more than limit of them; such a
// group keeps its first SummaryHead events, and in place of the next one
// a row that counts the rest and the objects they are about. A line
// unlike any other in the step is always shown. A line of more than
// limit words keeps its first LongLineWords (clipWords). limit 0 keeps
// every event whole.
func summarize(events []Event, limit int) []row {
	rows := make([]row, 0, len(events))
	if limit <= 0 {
		for _, e := range events {
			rows = append(rows, row{event: e})
		}
		return rows
	}
	shapes := make([]string, len(events))
	total := map[string]int{}
	objects := map[string]map[string]bool{}
	for i, e := range events {
		g := Shape(e)
		shapes[i] = g
		if total[g]++; e.Key != "" && total[g] > SummaryHead {
			if objects[g] == nil {
				objects[g] = map[string]bool{}
			}
			objects[g][e.Key] = true
		}
	}
	// The objects of the step's rare lines (its news: the one real update,
	// a delete) keep their words in a long line that is cut short.
	var news map[string]bool
	for i, e := range events {
		if e.Key != "" && total[shapes[i]] <= SummaryHead {
			if news == nil {
				news = map[string]bool{}
			}
			news[e.Key] = true
		}
	}
	seen := map[string]int{}
	for i, e := range events {
		g := shapes[i]
		seen[g]++
		switch n := seen[g]; {
		case total[g] <= limit || n <= SummaryHead:
			rows = append(rows, row{event: e, shown: clipWords(e.Text(), limit, news)})
		case n == SummaryHead+1:
			rows = append(rows, row{event: e, shown: summaryLine(e.Layer, total[g]-SummaryHead, len(objects[g]))})
		}
	}
	return rows
}

// row is one line of a step as shown: an event, its text as shown (cut
// by clipWords), or in its place a summary of it and the lines like it.
type row struct {
	event Event
	shown string // "": the event's own text
}

func (r row) text() string {
	if r.shown != "" {
		return r.shown
	}
	return r.event.Text()
}

// LongLineWords is how many words of a summarized line are shown when it
// has more than the summary limit: a ReplacedAll of 10,000 objects is
// one line of 10,000 words.
const LongLineWords = 20

// NewsWords is how many words about the step's news a cut line keeps at
// most.
const NewsWords = 10

// clipWords cuts text after its first LongLineWords words if it has more
// than limit, and says how many it left out. Of the words it leaves out,
// it still shows (up to NewsWords) those that name an object in news as
// key@rv: in a ReplacedAll of 5,000 objects, the one the relist brought
// news of.
func clipWords(text string, limit int, news map[string]bool) string {
	if limit <= 0 || strings.Count(text, " ") < limit {
		return text
	}
	words := strings.Fields(text)
	if len(words) <= limit {
		return text
	}
	var b strings.Builder
	b.WriteString(strings.Join(words[:LongLineWords], " "))
	left := len(words) - LongLineWords
	kept := 0
	for _, w := range words[LongLineWords:] {
		if kept == NewsWords {
			break
		}
		if key, _, ok := strings.Cut(strings.TrimLeft(w, "{(["), "@"); ok && news[key] {
			b.WriteString(" … " + w)
			kept++
			left--
		}
	}
	b.WriteString(" … " + Thousands(left) + " more words")
	return b.String()
}

// summaryLine is "… 9,995 more watch lines like these (9,995 objects)".
func summaryLine(layer string, more, objects int) string {
	s := fmt.Sprintf("… %s more %s lines like these", Thousands(more), layer)
	switch objects {
	case 0:
		return s
	case 1:
		return s + " (1 object)"
	}
	return s + " (" + Thousands(objects) + " objects)"
}

// thousands writes n with a comma between each group of three digits.
func Thousands(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + Thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// Wrap breaks text into lines of at most width runes, at spaces only,
// and returns them; a word longer than width is a line of its own, whole
// (never broken mid-word). A width of 0 or less, or one line of text
// that fits, comes back as it is. Runs of spaces inside a line are kept
// (they align columns); the spaces a line is broken at are dropped.
func Wrap(text string, width int) []string {
	if width <= 0 || utf8.RuneCountInString(text) <= width {
		return []string{text}
	}
	var lines []string
	line := ""
	for _, word := range splitKeepingRuns(text) {
		switch {
		case line == "":
			line = strings.TrimLeft(word, " ")
		case utf8.RuneCountInString(line+word) <= width:
			line += word
		default:
			lines = append(lines, line)
			line = strings.TrimLeft(word, " ")
		}
	}
	return append(lines, line)
}

// splitKeepingRuns cuts text before each word, so that every piece but
// the first is the spaces before a word and the word: "OnAdd    a@2 b"
// is "OnAdd", "    a@2", " b".
func splitKeepingRuns(text string) []string {
	var pieces []string
	start := 0
	for i := 1; i < len(text); i++ {
		if text[i] == ' ' && text[i-1] != ' ' {
			pieces = append(pieces, text[start:i])
			start = i
		}
	}
	return append(pieces, text[start:])
}
