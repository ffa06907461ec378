package trace

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Escape is text as a terminal may be given it: each character that a
// terminal would act on rather than show is written as Go writes it in a
// quoted string (%q): a control character (ESC as \x1b, BEL as \a, a
// newline as \n, C1 controls as \u009b), a character that reorders the
// text around it (U+202E as \u202e), and a byte that is not UTF-8 (as
// \xff). Everything else is left as it is, so a trace of well-behaved
// names reads unchanged.
//
// Text traces hold what came from outside cachelab: a session's object
// names, labels and server messages (cachelab replay) are a cluster's
// data, and a name holding ESC]0;…BEL would set the terminal's title, and
// ESC[2J clear its screen. Every text output path escapes what it prints
// (the trace's lines, the header, a divergence's diff, the story of an
// object, the CLI's messages). JSON output keeps every character, as
// \u escapes (escapedJSON).
func Escape(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unsafeRune(r):
			q := strconv.QuoteRune(r) // '\x1b', '\a', '\u202e'
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// EscapeLines is Escape for text of several lines: each line is escaped,
// and the newlines between them are kept.
func EscapeLines(s string) string {
	if !needsEscape(strings.ReplaceAll(s, "\n", "")) {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = Escape(l)
	}
	return strings.Join(lines, "\n")
}

// needsEscape reports whether s holds anything Escape would change: a
// quick scan that leaves printable ASCII alone.
func needsEscape(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == 0x7f {
			return true
		}
		if c >= utf8.RuneSelf {
			for _, r := range s[i:] {
				if r == utf8.RuneError || unsafeRune(r) {
					return true
				}
			}
			return false
		}
	}
	return false
}

// unsafeRune reports whether a terminal acts on r rather than showing
// it: a control character (C0, DEL, C1), or one that reorders text (the
// Unicode bidirectional controls, as in "Trojan Source").
func unsafeRune(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)
}

// escapedJSON is a writer of JSON records that writes, as \u escapes,
// the characters a terminal acts on that encoding/json leaves as they
// are: it escapes C0 controls, but not C1 controls (U+009B is CSI to many
// terminals) nor the bidirectional ones. The record reads back the same:
// in JSON text, anything but ASCII can only be inside a string, where an
// escape is the character itself. Each Write must be whole records, as
// json.Encoder writes them (one value per Write).
type escapedJSON struct{ w io.Writer }

func (e escapedJSON) Write(b []byte) (int, error) {
	if !hasUnsafeRune(b) {
		return e.w.Write(b)
	}
	out := make([]byte, 0, len(b)+16)
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r >= utf8.RuneSelf && unsafeRune(r) {
			out = fmt.Appendf(out, `\u%04x`, r)
		} else {
			out = append(out, b[i:i+n]...)
		}
		i += n
	}
	if _, err := e.w.Write(out); err != nil {
		return 0, err
	}
	return len(b), nil
}

// hasUnsafeRune reports whether b holds a character beyond ASCII that
// unsafeRune refuses.
func hasUnsafeRune(b []byte) bool {
	for i := 0; i < len(b); i++ {
		if b[i] >= utf8.RuneSelf {
			for _, r := range string(b[i:]) {
				if r >= utf8.RuneSelf && unsafeRune(r) {
					return true
				}
			}
			return false
		}
	}
	return false
}
