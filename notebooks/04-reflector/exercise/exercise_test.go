//go:build !lab

// The maintainers' tests of the lab, which CI runs: the reference
// solution passes, the skeleton fails, every check can fail. The lab
// command (go test -tags lab) leaves them out, so that what it prints is
// the learner's sheet alone.

package exercise_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/cachelab/cachelab/notebooks/04-reflector/exercise"
	"github.com/cachelab/cachelab/notebooks/04-reflector/exercise/skeleton"
	"github.com/cachelab/cachelab/notebooks/04-reflector/exercise/solution"
	"github.com/cachelab/cachelab/notebooks/internal/lab"
)

// The reference solution passes every check.
func TestSolutionPasses(t *testing.T) {
	lab.SolutionPasses(t, exercise.Checks(t, solution.AfterWatch))
}

// The skeleton as handed out, kept in skeleton/afterwatch.go (the
// learner's file may be their work by now), fails the lab, and each
// failure says what client-go does instead.
func TestSkeletonFails(t *testing.T) {
	lab.SkeletonFails(t, exercise.Checks(t, func(e exercise.WatchEnd) exercise.Next {
		n := skeleton.AfterWatch(skeleton.WatchEnd(e))
		return exercise.Next{Action: exercise.Action(n.Action), Backoff: n.Backoff, ResourceVersion: n.ResourceVersion}
	}))
}

// Every check can fail: each is failed by at least one of these plausible
// mistakes, so none passes whatever the code does.
func TestEachCheckCanFail(t *testing.T) {
	ref := solution.AfterWatch
	mistakes := map[string]func(exercise.WatchEnd) exercise.Next{
		"every ending relists after a backoff": func(e exercise.WatchEnd) exercise.Next {
			return exercise.Next{Action: exercise.Relist, Backoff: true, ResourceVersion: e.LastSyncedRV}
		},
		"every ending watches again at once": func(e exercise.WatchEnd) exercise.Next {
			return exercise.Next{Action: exercise.Rewatch, ResourceVersion: e.LastSyncedRV}
		},
		"410 relists from rv \"\"": func(e exercise.WatchEnd) exercise.Next {
			n := ref(e)
			if e.Status == http.StatusGone {
				n.ResourceVersion = ""
			}
			return n
		},
		"a watch of exactly 1 s is short": func(e exercise.WatchEnd) exercise.Next {
			if e.Status == 0 && e.Lasted <= time.Second && e.Events == 0 {
				return exercise.Next{Action: exercise.Relist, Backoff: true, ResourceVersion: e.LastSyncedRV}
			}
			return ref(e)
		},
		"short means short, events or not": func(e exercise.WatchEnd) exercise.Next {
			if e.Status == 0 && e.Lasted < time.Second {
				return exercise.Next{Action: exercise.Relist, Backoff: true, ResourceVersion: e.LastSyncedRV}
			}
			return ref(e)
		},
		"short is checked before the error": func(e exercise.WatchEnd) exercise.Next {
			if e.Lasted < time.Second && e.Events == 0 {
				return exercise.Next{Action: exercise.Relist, Backoff: true, ResourceVersion: e.LastSyncedRV}
			}
			return ref(e)
		},
		"429 re-watches at once": func(e exercise.WatchEnd) exercise.Next {
			n := ref(e)
			if e.Status == http.StatusTooManyRequests {
				n.Backoff = false
			}
			return n
		},
		"a failed Watch call is retried as a watch": func(e exercise.WatchEnd) exercise.Next {
			n := ref(e)
			if e.FromWatchCall {
				n.Action = exercise.Rewatch
			}
			return n
		},
		"500 is retried as a watch at once": func(e exercise.WatchEnd) exercise.Next {
			if e.Status == http.StatusInternalServerError {
				return exercise.Next{Action: exercise.Rewatch, ResourceVersion: e.LastSyncedRV}
			}
			return ref(e)
		},
	}
	runs := map[string][]lab.Check{}
	for name, m := range mistakes {
		runs[name] = exercise.Checks(t, m)
	}
	lab.EachCanFail(t, exercise.Checks(t, ref), runs)
}
