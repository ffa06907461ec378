//go:build !lab

// The maintainers' tests of the lab, which CI runs: the reference
// solution passes, the skeleton fails, every check can fail. The lab
// command (go test -tags lab) leaves them out, so that what it prints is
// the learner's sheet alone.

package exercise

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cachelab/cachelab/notebooks/01-objects-keys-indexer/exercise/skeleton"
	"github.com/cachelab/cachelab/notebooks/01-objects-keys-indexer/exercise/solution"
	"github.com/cachelab/cachelab/notebooks/internal/lab"
)

var reference = Impl{KeyFunc: solution.KeyFunc, AppIndex: solution.AppIndex}

// The reference solution passes every check.
func TestSolutionPasses(t *testing.T) {
	lab.SolutionPasses(t, Checks(reference, reference))
}

// The skeleton as handed out, kept in skeleton/keys.go (the learner's
// file may be their work by now), fails the lab, and each failure says
// what client-go does instead.
func TestSkeletonFails(t *testing.T) {
	skel := Impl{KeyFunc: skeleton.KeyFunc, AppIndex: skeleton.AppIndex}
	lab.SkeletonFails(t, Checks(skel, reference))
}

// Every check can fail: each is failed by at least one of these plausible
// mistakes, so none passes whatever the code does.
func TestEachCheckCanFail(t *testing.T) {
	mistakes := map[string]Impl{
		"name only": {KeyFunc: func(o any) (string, error) {
			k, err := solution.KeyFunc(o)
			if i := strings.LastIndex(k, "/"); i >= 0 {
				k = k[i+1:]
			}
			return k, err
		}, AppIndex: solution.AppIndex},
		"always a slash": {KeyFunc: func(o any) (string, error) {
			k, err := solution.KeyFunc(o)
			if err == nil && !strings.Contains(k, "/") {
				k = "/" + k
			}
			return k, err
		}, AppIndex: solution.AppIndex},
		"no error without metadata": {KeyFunc: func(o any) (string, error) {
			k, err := solution.KeyFunc(o)
			if err != nil {
				return "", nil
			}
			return k, nil
		}, AppIndex: solution.AppIndex},
		"ExplicitKey not special": {KeyFunc: func(o any) (string, error) {
			if _, ok := o.(interface{ GetName() string }); !ok {
				return "", fmt.Errorf("no metadata")
			}
			return solution.KeyFunc(o)
		}, AppIndex: solution.AppIndex},
		"empty bucket for unlabelled": {KeyFunc: solution.KeyFunc, AppIndex: func(o any) ([]string, error) {
			v, err := solution.AppIndex(o)
			if len(v) == 0 {
				v = []string{""}
			}
			return v, err
		}},
	}
	runs := map[string][]lab.Check{}
	for name, m := range mistakes {
		runs[name] = Checks(m, reference)
	}
	lab.EachCanFail(t, Checks(reference, reference), runs)
}
