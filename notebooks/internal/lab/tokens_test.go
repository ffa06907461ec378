package lab

import (
	"fmt"
	"go/scanner"
	"go/token"
	"testing"
)

// tokensDiffer says where two Go files' code first differs, or "" if it
// does not: their tokens, as the compiler reads them, compared one by
// one, so that comments, blank lines and the package's name (a
// skeleton's copy is package skeleton) do not count.
func tokensDiffer(nameA string, a []byte, nameB string, b []byte) string {
	ta, tb := tokens(nameA, a), tokens(nameB, b)
	for i := range max(len(ta), len(tb)) {
		switch {
		case i >= len(ta):
			return fmt.Sprintf("%s has %q where %s ends", tb[i].at, tb[i].text, nameA)
		case i >= len(tb):
			return fmt.Sprintf("%s has %q where %s ends", ta[i].at, ta[i].text, nameB)
		case ta[i].text != tb[i].text:
			return fmt.Sprintf("%s has %q, %s %q", ta[i].at, ta[i].text, tb[i].at, tb[i].text)
		}
	}
	return ""
}

// tok is one token: its text, and where it is ("keys.go:12").
type tok struct{ text, at string }

// tokens are src's tokens, comments aside, with the package's name
// replaced by "_". A semicolon the scanner inserts at a line's end counts
// as one written out, and one before a closing ")" or "}", which Go lets
// a line leave out ("{ return 0 }"), does not count, so that only the
// code, not its layout, matters. A file that does not scan ends at its
// first error, with the error as its last token.
func tokens(name string, src []byte) []tok {
	fset := token.NewFileSet()
	var s scanner.Scanner
	var bad []string
	s.Init(fset.AddFile(name, -1, len(src)), src, func(pos token.Position, msg string) { bad = append(bad, pos.String()+": "+msg) }, 0)
	var out []tok
	afterPackage := false
	for {
		pos, t, lit := s.Scan()
		if t == token.EOF || len(bad) > 0 {
			if len(bad) > 0 {
				out = append(out, tok{bad[0], bad[0]})
			}
			return out
		}
		text := t.String()
		switch {
		case afterPackage:
			text = "_"
		case t == token.SEMICOLON:
			text = ";"
		case lit != "":
			text = lit
		}
		afterPackage = t == token.PACKAGE
		if n := len(out); n > 0 && out[n-1].text == ";" && (t == token.RPAREN || t == token.RBRACE) {
			out = out[:n-1]
		}
		p := fset.Position(pos)
		out = append(out, tok{text, fmt.Sprintf("%s:%d", p.Filename, p.Line)})
	}
}

// A copy of a skeleton is the same code whatever its comments, layout and
// package name; any change to the code is found, and said where.
func TestTokensDiffer(t *testing.T) {
	const skeleton = "// Package exercise is a lab.\npackage exercise\n\n// F is unwritten.\nfunc F() int {\n\t// TODO\n\treturn 0\n}\n"
	for _, c := range []struct {
		name, copy, want string
	}{
		{"the same", skeleton, ""},
		{"other comments, package and layout", "package skeleton\n\nfunc F() int { return 0 }\n", ""},
		{"a comment edited", "// Package exercise is the lab.\npackage exercise\n\nfunc F() int {\n\t// TODO: write it\n\treturn 0 // nothing yet\n}\n", ""},
		{"another value", "package skeleton\n\nfunc F() int {\n\treturn 1\n}\n", `a.go:7 has "0", b.go:4 "1"`},
		{"a statement more", "package skeleton\n\nfunc F() int {\n\tprintln()\n\treturn 0\n}\n", `a.go:7 has "return", b.go:4 "println"`},
		{"a function more", skeleton + "func G() {}\n", `b.go:9 has "func" where a.go ends`},
		{"code that does not scan", "package skeleton\n\nfunc F() int { return '' }\n", `a.go:7 has "0", b.go:3:23: illegal rune literal "b.go:3:23: illegal rune literal"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := tokensDiffer("a.go", []byte(skeleton), "b.go", []byte(c.copy)); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}
