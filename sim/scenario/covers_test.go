package scenario

import (
	"slices"
	"testing"
)

// A scenario covers the IDs of its "# Covers:" line, each once, in the
// order written; IDs its prose mentions are not covers (issue 27, case
// 14: corrupt-object listed "F1 P6 E12 F1 F3 F4 F6 P6", harvested from
// every ID-shaped word of its opening comment).
func TestCoversLine(t *testing.T) {
	cases := []struct {
		name, about string
		want        []string
	}{
		{"one line", "# Deleting a pod.\n# Covers: P1 E6\n", []string{"P1", "E6"}},
		{"prose IDs are not covers", "# F1's request, then P6's sync.\n# Covers: E12 F1 F3\n", []string{"E12", "F1", "F3"}},
		{"repeats once", "# s\n# Covers: F1 P6 F1 E12 P6\n", []string{"F1", "P6", "E12"}},
		{"commas", "# s\n# Covers: F1, P6,E12\n", []string{"F1", "P6", "E12"}},
		{"anywhere in the paragraph", "# s\n# Covers: C4\n# Server: watchcache\n", []string{"C4"}},
		{"no line", "# A scenario that names P1 in its prose.\n", nil},
		{"empty line", "# s\n# Covers:\n", nil},
		{"none", "# s\n# Covers: none\n", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sc, err := Parse("x.txt", []byte(c.about+"\nstart\n----\n"))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(sc.IDs, c.want) {
				t.Errorf("got IDs %q, want %q", sc.IDs, c.want)
			}
		})
	}
}
