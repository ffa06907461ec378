package controllertest

import (
	"strings"
	"testing"
)

// A story file, whatever it holds, is read or refused with its file and
// line; one read back, with any fault placed in it and written out as
// the report writes it, reads again, as its steps and the fault's
// commands.
func FuzzParseStory(f *testing.F) {
	for _, seed := range []string{parentStory, "# x\nstop\n----\n\nstart\n----\n",
		"# x\nstart informer=pods\n----\n", "# x\ncreate configmaps ns0/a data=(k=v)\n----\n\nadvance 10s\n----\n", "crd\nnot: [yaml\n----\n"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, src string) {
		s, err := ParseStory("story.txt", []byte(src))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "story.txt:") {
				t.Fatalf("an error without the file's name and line: %v", err)
			}
			return
		}
		e := Explore{Story: s}
		for _, p := range append([]Placement{{}}, e.placements()...) {
			file := e.file(p, p.describe(s.sc))
			again, err := ParseStory("placed.txt", []byte(file))
			if err != nil {
				t.Fatalf("%s, written out, does not read again: %v\n%s", p.describe(s.sc), err, file)
			}
			if got, want := again.Steps(), len(p.commands(s.sc)); got != want {
				t.Fatalf("%s, written out, reads as %d steps; it has %d commands\n%s", p.describe(s.sc), got, want, file)
			}
		}
	})
}
