//go:build !lab

// The maintainers' tests of the lab, which CI runs: the reference
// solution passes, the skeleton fails, every check can fail. The lab
// command (go test -tags lab) leaves them out, so that what it prints is
// the learner's sheet alone.

package exercise

import (
	"testing"

	"github.com/cachelab/cachelab/notebooks/05-informer/exercise/skeleton"
	"github.com/cachelab/cachelab/notebooks/05-informer/exercise/solution"
	"github.com/cachelab/cachelab/notebooks/internal/lab"
)

// The reference solution passes every check.
func TestSolutionPasses(t *testing.T) {
	lab.SolutionPasses(t, Checks(solution.Process))
}

// The skeleton as handed out, kept in skeleton/process.go (the learner's
// file may be their work by now), fails the lab, and each failure says
// what client-go does instead.
func TestSkeletonFails(t *testing.T) {
	lab.SkeletonFails(t, Checks(skeleton.Process))
}

// Every check can fail: each is failed by at least one plausible mistake.
func TestEachCheckCanFail(t *testing.T) {
	mistakes := map[string]ProcessFunc{
		"initial flag always false": func(c map[string]string, d Delta, initial bool) []Call {
			return solution.Process(c, d, false)
		},
		"ADDED always OnAdd": func(c map[string]string, d Delta, initial bool) []Call {
			out := solution.Process(c, d, initial)
			if d.Type == "Added" && out[0].Method == "OnUpdate" {
				out[0] = Call{Method: "OnAdd", Key: d.Key, New: d.RV, InitialList: initial}
			}
			return out
		},
		"MODIFIED always OnUpdate": func(c map[string]string, d Delta, initial bool) []Call {
			out := solution.Process(c, d, initial)
			if d.Type == "Updated" && out[0].Method == "OnAdd" {
				out[0] = Call{Method: "OnUpdate", Key: d.Key, Old: "", New: d.RV}
			}
			return out
		},
		"OnDelete only when cached": func(c map[string]string, d Delta, initial bool) []Call {
			_, cached := c[d.Key]
			out := solution.Process(c, d, initial)
			if d.Type == "Deleted" && !cached {
				return nil
			}
			return out
		},
		"OnDelete with the cached state": func(c map[string]string, d Delta, initial bool) []Call {
			old := c[d.Key]
			out := solution.Process(c, d, initial)
			if d.Type == "Deleted" && old != "" {
				out[0].New = old
			}
			return out
		},
		"OnUpdate with old and new swapped": func(c map[string]string, d Delta, initial bool) []Call {
			out := solution.Process(c, d, initial)
			if len(out) == 1 && out[0].Method == "OnUpdate" {
				out[0].Old, out[0].New = out[0].New, out[0].Old
			}
			return out
		},
	}
	runs := map[string][]lab.Check{}
	for name, m := range mistakes {
		runs[name] = Checks(m)
	}
	lab.EachCanFail(t, Checks(solution.Process), runs)
}
