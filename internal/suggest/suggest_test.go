package suggest

import (
	"slices"
	"testing"
)

// The names suggested for one that is not there: near in edits, or
// containing it, nearest first, at most n. (Moved from cmd/cachelab,
// which suggested scenario names with it before sim/scenario suggested
// command names too.)
func TestClosest(t *testing.T) {
	names := []string{"add-update-delete", "list-then-watch", "relist-after-compaction", "watch-errors", "watch-list", "watch-timeout"}
	for _, tc := range []struct {
		name string
		want []string
	}{
		{"relist-after-compactoin", []string{"relist-after-compaction"}},
		{"watchlist", []string{"watch-list"}},
		{"watch", []string{"watch-list", "watch-errors", "watch-timeout"}},
		{"add", []string{"add-update-delete"}},
		{"zzzzzzzz", nil},
	} {
		if got := Closest(tc.name, names, 3); !slices.Equal(got, tc.want) {
			t.Errorf("Closest(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// distance, against a few pairs worked by hand.
func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"", "abc", 3}, {"abc", "", 3}, {"kitten", "sitting", 3}, {"flaw", "lawn", 2}, {"same", "same", 0},
	} {
		if got := distance(tc.a, tc.b); got != tc.want {
			t.Errorf("distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
