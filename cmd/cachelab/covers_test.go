package main

import (
	"strings"
	"testing"

	"github.com/cachelab/cachelab/sim/scenario"
)

// describe names the IDs of a scenario's "# Covers:" line, each once, and
// prints no Covers line for a scenario that covers none (issue 27, case
// 14).
func TestDescribeCovers(t *testing.T) {
	for _, tc := range []struct{ about, want string }{
		{"# Deleting a pod, F1 and P6 in prose.\n# Covers: P1 E6 P1\n", "\nCovers:  P1 E6 (REFERENCE.md)\n"},
		{"# Deleting a pod, P1 in prose.\n", ""},
	} {
		sc, err := scenario.Parse("x.txt", []byte(tc.about+"\nstart\n----\n"))
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		describe(&b, sc, 0)
		var got string
		for _, l := range strings.Split(b.String(), "\n") {
			if strings.Contains(strings.ToLower(l), "covers") && !strings.Contains(l, "in prose") {
				got += "\n" + l + "\n"
			}
		}
		if got != tc.want {
			t.Errorf("%s: got the Covers lines %q, want %q in\n%s", tc.about, got, tc.want, b.String())
		}
	}
}

// The catalog's COVERS column lists each built-in scenario's IDs once.
func TestListScenariosCoversOnce(t *testing.T) {
	c := newCLI("", false, nil)
	c.run(t, exitOK, "scenarios")
	for _, l := range strings.Split(c.stdout.String(), "\n") {
		seen := map[string]bool{}
		for _, w := range strings.Fields(l) {
			if seen[w] && len(w) <= 3 && w[0] >= 'A' && w[0] <= 'Z' {
				t.Errorf("%q lists %s twice", l, w)
			}
			seen[w] = true
		}
	}
}
