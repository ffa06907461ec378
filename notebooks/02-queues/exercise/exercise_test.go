//go:build !lab

// The maintainers' tests of the lab, which CI runs: the reference
// solution passes, the skeleton fails, every check can fail. The lab
// command (go test -tags lab) leaves them out, so that what it prints is
// the learner's sheet alone.

package exercise

import (
	"testing"

	"github.com/cachelab/cachelab/notebooks/02-queues/exercise/skeleton"
	"github.com/cachelab/cachelab/notebooks/02-queues/exercise/solution"
	"github.com/cachelab/cachelab/notebooks/internal/lab"
)

// The reference solution passes every check.
func TestSolutionPasses(t *testing.T) {
	lab.SolutionPasses(t, Checks(solution.Pops))
}

// The skeleton as handed out, kept in skeleton/deltafifo.go (the
// learner's file may be their work by now), fails the lab, and each
// failure says what client-go does instead.
func TestSkeletonFails(t *testing.T) {
	lab.SkeletonFails(t, Checks(skeleton.Pops))
}

// Every check can fail: each is failed by at least one of these plausible
// mistakes (models of the other queues, or of DeltaFIFO with one rule
// missing).
func TestEachCheckCanFail(t *testing.T) {
	realFIFO := func(ops []Op) [][]Delta { // every change its own item, D3 kept
		var queue [][]Delta
		var out [][]Delta
		seen := map[string]bool{}
		for _, op := range ops {
			switch {
			case op.Kind == "pop":
				if len(queue) > 0 {
					out, queue = append(out, queue[0]), queue[1:]
				}
			case op.Kind == "delete" && !seen[op.Key]:
			default:
				typ := map[string]string{"add": "Added", "update": "Updated", "delete": "Deleted"}[op.Kind]
				seen[op.Key] = true
				queue = append(queue, []Delta{{Type: typ, Key: op.Key, RV: op.RV}})
			}
		}
		return append(out, queue...)
	}
	without := func(rule string) PopsFunc {
		return func(ops []Op) [][]Delta {
			var kept []Op
			for _, op := range ops {
				kept = append(kept, op)
			}
			got := solution.Pops(kept)
			switch rule {
			case "D2": // keep both deletes: add a duplicate where the model dropped one
				for i, item := range got {
					if n := len(item); n > 0 && item[n-1].Type == "Deleted" {
						for _, op := range ops {
							if op.Kind == "delete" && op.Key == item[n-1].Key && op.RV != item[n-1].RV {
								got[i] = append(item, Delta{Type: "Deleted", Key: op.Key, RV: op.RV})
								break
							}
						}
					}
				}
			case "order": // keys sorted by name instead of queue order
				for i := range got {
					for j := i + 1; j < len(got); j++ {
						if got[j][0].Key < got[i][0].Key {
							got[i], got[j] = got[j], got[i]
						}
					}
				}
			}
			return got
		}
	}
	mistakes := map[string]PopsFunc{"realfifo": realFIFO, "no D2": without("D2"), "sorted keys": without("order")}
	runs := map[string][]lab.Check{}
	for name, m := range mistakes {
		runs[name] = Checks(m)
	}
	lab.EachCanFail(t, Checks(solution.Pops), runs)
}
