package exploring_test

import (
	"os"
	"strings"
	"testing"

	"github.com/cachelab/cachelab/sim/explore"
)

// docs/exploring.md opens with a report of `cachelab explore
// missed-delete-tombstone`, its first groups and then "...". The same
// exploration, made here (as the CLI makes it: every placement, seed 1),
// prints those lines first: the page cannot go stale unseen.
func TestExploringPageSampleIsCurrent(t *testing.T) {
	page, err := os.ReadFile("../../docs/exploring.md")
	if err != nil {
		t.Fatal(err)
	}
	const cmd = "```\ngo run ./cmd/cachelab explore missed-delete-tombstone\n```\n\n```\n"
	_, rest, ok := strings.Cut(string(page), cmd)
	sample, _, ok2 := strings.Cut(rest, "...\n```\n")
	if !ok || !ok2 {
		t.Fatalf("docs/exploring.md has no block %q followed by a report that ends in \"...\"", cmd)
	}
	var b strings.Builder
	exploration("missed-delete-tombstone", explore.Options{}).WriteReport(&b, nil)
	if got := b.String(); !strings.HasPrefix(got, sample) {
		t.Errorf("docs/exploring.md shows a report that begins:\n%s\nthe exploration prints:\n%s", sample, got)
	}
}
