package scenario

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// A scenario file is text a terminal shows: the trace prints its names,
// and a diff its expected lines. Parse refuses, first of all, what would
// act on the terminal instead of showing.

// checkText refuses what must never reach a terminal: bytes that are not
// UTF-8, control characters other than tab (line ends are gone already:
// text is split into lines), and the characters that reorder or break
// text as a terminal shows it. Any of them in a name or an expected line
// would be printed raw by the trace or a diff. It returns the 1-based
// line and what was wrong, or 0.
func checkText(lines []string) (int, string) {
	for n, line := range lines {
		col := 0
		for i := 0; i < len(line); {
			r, size := utf8.DecodeRuneInString(line[i:])
			col++
			if r == utf8.RuneError && size == 1 {
				return n + 1, fmt.Sprintf("byte 0x%02x at column %d is not UTF-8; a scenario file is UTF-8 text", line[i], col)
			}
			if why := hiddenRune(r); why != "" {
				return n + 1, fmt.Sprintf("character %s at column %d: %s", runeName(r), col, why)
			}
			i += size
		}
	}
	return 0, ""
}

// hiddenRune says why r may not appear in a scenario file, or "".
func hiddenRune(r rune) string {
	switch {
	case r == '\t':
		return ""
	case r == '\r':
		return "a carriage return that does not end a line (line ends are \\n or \\r\\n); it moves a terminal's cursor back over the line"
	case unicode.IsControl(r):
		return "a scenario file may hold no control characters but tab and line ends, so that nothing in it can act on the terminal that shows it"
	case r == 0x061c || r == 0x200e || r == 0x200f || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069):
		return "bidirectional-text controls can make a terminal show text other than what the file holds"
	case r == 0x2028 || r == 0x2029:
		return "a line or paragraph separator breaks the line on screen but not in the file, so file:line would point elsewhere"
	}
	return ""
}

// runeName is U+001B, with a short name for the control characters an
// editor or a paste most often leaves behind.
func runeName(r rune) string {
	names := map[rune]string{0: "NUL", 7: "BEL", 8: "BS", 0x0b: "VT", 0x0c: "FF", 0x0d: "CR", 0x1b: "ESC", 0x7f: "DEL"}
	if n, ok := names[r]; ok {
		return fmt.Sprintf("%U (%s)", r, n)
	}
	return fmt.Sprintf("%U", r)
}
