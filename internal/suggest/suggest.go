// Package suggest finds the names nearest to one that was mistyped, for
// a "did you mean" in an error: a scenario name cachelab does not have
// (cmd/cachelab), a command a scenario file cannot say (sim/scenario).
// One rule for both, so that a user meets the same help wherever a name
// is wrong.
//
// It imports nothing but the standard library, so that sim/scenario,
// which may not depend on the rest of cachelab, can use it.
package suggest

import (
	"slices"
	"strings"
)

// Closest returns up to n of names nearest to name: those within a third
// of its length in edits (two at least), or that contain it, nearest
// first (names equally near keep their order). None is close: nil.
func Closest(name string, names []string, n int) []string {
	type near struct {
		name string
		d    int
	}
	var found []near
	for _, c := range names {
		d := distance(name, c)
		if d <= max(2, len(name)/3) || strings.Contains(c, name) {
			found = append(found, near{c, d})
		}
	}
	slices.SortStableFunc(found, func(a, b near) int { return a.d - b.d })
	var out []string
	for _, f := range found[:min(n, len(found))] {
		out = append(out, f.name)
	}
	return out
}

// distance is the Levenshtein distance between a and b: the fewest
// insertions, deletions and substitutions of bytes that turn one into the
// other. O(len(a)·len(b)) time, one row of memory.
func distance(a, b string) int {
	row := make([]int, len(b)+1)
	for j := range row {
		row[j] = j
	}
	for i := 1; i <= len(a); i++ {
		diag := row[0] // row[i-1][j-1]
		row[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			diag, row[j] = row[j], min(row[j]+1, row[j-1]+1, diag+cost)
		}
	}
	return row[len(b)]
}
