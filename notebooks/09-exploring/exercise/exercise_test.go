//go:build !lab

// The maintainers' tests of the lab, which CI runs: the reference
// solution passes, the skeleton fails, every check can fail. The lab
// command (go test -tags lab) leaves them out, so that what it prints is
// the learner's sheet alone.

package exercise

import (
	"testing"

	"github.com/cachelab/cachelab/notebooks/09-exploring/exercise/skeleton"
	"github.com/cachelab/cachelab/notebooks/09-exploring/exercise/solution"
	"github.com/cachelab/cachelab/notebooks/internal/lab"
)

// The reference solution passes every check.
func TestSolutionPasses(t *testing.T) {
	lab.SolutionPasses(t, Checks(solution.LosesDelete))
}

// The skeleton as handed out, kept in skeleton/predict.go (the learner's
// file may be their work by now), fails the lab, and each failure says
// what the explorer found instead.
func TestSkeletonFails(t *testing.T) {
	lab.SkeletonFailsAgainst(t, "the explorer", Checks(skeleton.LosesDelete))
}

// Every check can fail, and says so where the learner can act on it:
// each plausible wrong prediction below (the chapter's stories warn of
// each) fails a check whose message holds the words it must, and each
// check is failed by at least one of them, so none passes whatever the
// prediction.
func TestEachCheckCanFail(t *testing.T) {
	const (
		start, advance, del, compact = 3, 4, 5, 7
	)
	across := func(d, r int) bool { return d <= del && r > del } // disconnected when ns0/b is deleted
	mistakes := []struct {
		name       string
		prediction Prediction
		says       []string
	}{
		{"every disconnect across the delete loses it", across,
			[]string{"disconnect before step 5 (delete ns0/b), reconnect before step 6 (create ns0/c):",
				"you said it loses the delete", "the explorer found it keeps the delete",
				"OnDelete ns0/b@4, at the reconnect before step 6"}},
		{"only a compaction loses it", func(d, r int) bool { return across(d, r) && r > compact },
			[]string{"disconnect before step 1 (add-handler h1), reconnect before step 6 (create ns0/c):",
				"you said it keeps the delete", "an object is never seen", "The handler never heard of ns0/b"}},
		{"an object never seen has lost nothing", func(d, r int) bool { return solution.LosesDelete(d, r) && d > start },
			[]string{"disconnect before step 1 (add-handler h1), reconnect before step 6 (create ns0/c):",
				"you said it keeps the delete", "an object is never seen"}},
		{"the very short watch forgotten", func(d, r int) bool { return across(d, r) && (d <= start || r > compact) },
			[]string{"disconnect before step 4 (advance 1s), reconnect before step 6 (create ns0/c):",
				"you said it keeps the delete", "a delete arrives as a tombstone",
				"OnDelete DeletedFinalStateUnknown{ns0/b, last seen ns0/b@3}, at the reconnect before step 6"}},
		{"the compaction forgotten", func(d, r int) bool { return across(d, r) && d <= advance },
			[]string{"disconnect before step 5 (delete ns0/b), reconnect at the end:",
				"you said it keeps the delete", "a delete arrives as a tombstone"}},
		{"a reconnect before the delete counts", func(d, r int) bool { return solution.LosesDelete(d, r) || d <= start && r == del },
			[]string{"disconnect before step 1 (add-handler h1), reconnect before step 5 (delete ns0/b):",
				"you said it loses the delete", "the explorer found it keeps the delete", "OnDelete ns0/b@4, at step 5 (delete ns0/b)"}},
	}
	var planted []lab.Mistake
	for _, m := range mistakes {
		planted = append(planted, lab.Mistake{Name: m.name, Checks: Checks(m.prediction), Says: m.says})
	}
	lab.MistakesFail(t, Checks(solution.LosesDelete), planted)
}
