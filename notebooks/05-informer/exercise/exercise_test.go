package exercise

import (
	"crypto/sha256"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/cachelab/cachelab/notebooks/05-informer/exercise/solution"
	"github.com/cachelab/cachelab/notebooks/internal/lab"
)

// The reference solution passes every check.
func TestSolutionPasses(t *testing.T) {
	for _, r := range lab.Run(Checks(solution.Process)) {
		if r.Err != nil {
			t.Errorf("%s %s: %v", r.ID, r.Behaviour, r.Err)
		}
	}
}

// skeletonSum is the SHA-256 of process.go as committed: the untouched
// skeleton. Once you edit process.go this test steps aside.
const skeletonSum = "e7ea4ec6817ef87872b793e2f87dd4af27b3eda1dd383d4efb09e941ea8439e3"

// The untouched skeleton fails the lab, and each failure says what
// client-go does instead.
func TestSkeletonFails(t *testing.T) {
	src, err := os.ReadFile("process.go")
	if err != nil {
		t.Fatal(err)
	}
	if sum := fmt.Sprintf("%x", sha256.Sum256(src)); sum != skeletonSum {
		t.Skipf("process.go is not the committed skeleton (sha256 %s): it is your work; check it with go test -tags lab", sum)
	}
	rs := lab.Run(Checks(Process))
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
	failed := map[int]bool{}
	for _, m := range mistakes {
		for i, r := range lab.Run(Checks(m)) {
			if r.Err != nil {
				failed[i] = true
			}
		}
	}
	for i, c := range Checks(solution.Process) {
		if !failed[i] {
			t.Errorf("%s %s: no mistake fails it", c.ID, c.Behaviour)
		}
	}
}
