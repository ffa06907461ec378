package exercise

import (
	"crypto/sha256"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/cachelab/cachelab/notebooks/01-objects-keys-indexer/exercise/solution"
	"github.com/cachelab/cachelab/notebooks/internal/lab"
)

var reference = Impl{KeyFunc: solution.KeyFunc, AppIndex: solution.AppIndex}

// The reference solution passes every check.
func TestSolutionPasses(t *testing.T) {
	for _, r := range lab.Run(Checks(reference, reference)) {
		if r.Err != nil {
			t.Errorf("%s %s: %v", r.ID, r.Behaviour, r.Err)
		}
	}
}

// skeletonSum is the SHA-256 of keys.go as committed: the untouched
// skeleton. Once you edit keys.go this test steps aside.
const skeletonSum = "9814b6955c1ff7458ad7b2788101e4470b07a47099b1a0b1ca78ce50fce04fc7"

// The untouched skeleton fails the lab, and each failure says what
// client-go does instead.
func TestSkeletonFails(t *testing.T) {
	src, err := os.ReadFile("keys.go")
	if err != nil {
		t.Fatal(err)
	}
	if sum := fmt.Sprintf("%x", sha256.Sum256(src)); sum != skeletonSum {
		t.Skipf("keys.go is not the committed skeleton (sha256 %s): it is your work; check it with go test -tags lab", sum)
	}
	rs := lab.Run(Checks(Yours, reference))
	if lab.Passed(rs) {
		t.Fatal("the untouched skeleton passes the lab")
	}
	for _, r := range rs {
		if r.Err != nil && !strings.Contains(r.Err.Error(), "client-go") {
			t.Errorf("%s %s: the message does not say what client-go does: %v", r.ID, r.Behaviour, r.Err)
		}
	}
	var b strings.Builder
	lab.Report(&b, "skeleton", rs)
	t.Logf("the skeleton's report:\n%s", b.String())
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
	failed := map[int]bool{}
	for _, m := range mistakes {
		for i, r := range lab.Run(Checks(m, reference)) {
			if r.Err != nil {
				failed[i] = true
			}
		}
	}
	for i, c := range Checks(reference, reference) {
		if !failed[i] {
			t.Errorf("%s %s: no mistake fails it", c.ID, c.Behaviour)
		}
	}
}
