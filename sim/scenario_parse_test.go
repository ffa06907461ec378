package sim

import (
	"errors"
	"strings"
	"testing"
)

// Bad scenario files are rejected before anything runs, with file:line
// and what was expected.
func TestParseErrors(t *testing.T) {
	cases := []struct {
		name, src, want string
	}{
		{"no comment", "create ns0/a\n----\n", "x.txt:1: a scenario starts with a # paragraph"},
		{"no separator", "# s\n\ncreate ns0/a\nstart\n", `x.txt:3: expected a line "----" after the command "create"`},
		{"unknown command", "# s\n\ncreat ns0/a\n----\n", `x.txt:3: unknown command "creat"; want one of: add-handler,`},
		{"unknown argument", "# s\n\nstart stak=classic\n----\n", `x.txt:3: unknown argument "stak"; usage: start`},
		{"bad stack", "# s\n\nstart stack=modern\n----\n", "x.txt:3: stack=modern: want default or classic"},
		{"bad key", "# s\n\ncreate a\n----\n", `x.txt:3: object "a": want namespace/name`},
		{"bad duration", "# s\n\nadvance soon\n----\n", "x.txt:3: advance soon: want a positive duration"},
		{"bad status", "# s\n\nfail-next watch=200\n----\n", "x.txt:3: watch=200: want an HTTP error status from 400 to 599"},
		{"missing positional", "# s\n\ndelete\n----\n", "x.txt:3: wrong number of arguments; usage: delete"},
		{"stray separator", "# s\n\n----\n", `x.txt:3: "----" with no command before it`},
		{"unclosed double separator", "# s\n\nstart\n----\n----\nline\n", "x.txt:3: output opened with \"----\" twice"},
		{"bad show", "# s\n\nshow everything\n----\n", `x.txt:3: show "everything": want store, queue, handlers, requests or synced`},
		{"no commands", "# just a comment\n", "x.txt:1: the scenario has no commands"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("x.txt", []byte(c.src))
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("got %v, want a *ParseError", err)
			}
			if !strings.HasPrefix(err.Error(), c.want) {
				t.Errorf("got  %q\nwant %q...", err, c.want)
			}
		})
	}
}

func TestParseLayout(t *testing.T) {
	src := "# Title line.\n# Covers: P1 D4\n\ncreate ns0/a \\\n  labels=(app=web)\n----\netcd x\n\nshow store\n----\n----\na\n\nb\n----\n----\n"
	sc, err := Parse("dir/name.txt", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if sc.Name != "name" || sc.Title != "Title line." || strings.Join(sc.IDs, ",") != "P1,D4" {
		t.Errorf("got name %q title %q ids %v", sc.Name, sc.Title, sc.IDs)
	}
	if len(sc.Steps) != 2 {
		t.Fatalf("got %d steps, want 2", len(sc.Steps))
	}
	if st := sc.Steps[0]; st.Line != 4 || st.Text != "create ns0/a labels=(app=web)" || st.Expected != "etcd x\n" {
		t.Errorf("step 1: got %+v", st)
	}
	if st := sc.Steps[1]; st.Expected != "a\n\nb\n" {
		t.Errorf("step 2 expected: got %q", st.Expected)
	}
}

// FuzzParse: no input panics the parser, and what it accepts, it accepts
// again from its own rendering.
func FuzzParse(f *testing.F) {
	cat, err := Catalog()
	if err != nil {
		f.Fatal(err)
	}
	for _, sc := range cat {
		src, _ := builtin.ReadFile("scenarios/" + sc.Name + ".txt")
		f.Add(src)
	}
	f.Add([]byte("# x\n\ncreate ns/a labels=(a=b,c\n----\n"))
	f.Add([]byte("# x\n\nstart labels=((\n----\n----\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		sc, err := Parse("fuzz.txt", src)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error is not a *ParseError: %v", err)
			}
			return
		}
		var b strings.Builder
		b.WriteString("# " + strings.ReplaceAll(sc.About, "\n", "\n# ") + "\n")
		for _, st := range sc.Steps {
			b.WriteString("\n" + st.Text + "\n----\n")
		}
		again, err := Parse("again.txt", []byte(b.String()))
		if err != nil {
			t.Fatalf("accepted %q but not its rendering %q: %v", src, b.String(), err)
		}
		if len(again.Steps) != len(sc.Steps) {
			t.Fatalf("rendering changed the step count: %d vs %d", len(again.Steps), len(sc.Steps))
		}
	})
}
