package exercise

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cachelab/cachelab/notebooks/internal/lab"
)

// The reference story passes every check.
func TestSolutionPasses(t *testing.T) {
	for _, r := range lab.Run(Checks("solution/story.txt")) {
		if r.Err != nil {
			t.Errorf("%s %s: %v", r.ID, r.Behaviour, r.Err)
		}
	}
}

// skeletonSum is the SHA-256 of story.txt as committed: the untouched
// skeleton. Once you edit story.txt this test steps aside.
const skeletonSum = "ea18d899a860f8a90d43dca8b5bb16c9e2c437027f4134b68f7b632f9f3d6118"

// The untouched skeleton fails the lab, and each failure says what
// client-go did instead.
func TestSkeletonFails(t *testing.T) {
	src, err := os.ReadFile("story.txt")
	if err != nil {
		t.Fatal(err)
	}
	if sum := fmt.Sprintf("%x", sha256.Sum256(src)); sum != skeletonSum {
		t.Skipf("story.txt is not the committed skeleton (sha256 %s): it is your work; check it with go test -tags lab", sum)
	}
	rs := lab.Run(Checks("story.txt"))
	if lab.Passed(rs) {
		t.Fatal("the untouched skeleton passes the lab")
	}
	for _, r := range rs {
		if r.Err != nil && !strings.Contains(r.Err.Error(), "client-go") {
			t.Errorf("%s %s: the message does not say what client-go did: %v", r.ID, r.Behaviour, r.Err)
		}
	}
	var b strings.Builder
	lab.Report(&b, "skeleton", rs)
	t.Logf("the skeleton's report:\n%s", b.String())
}

// Every check can fail: each is failed by at least one of these stories,
// which each tell the story with a piece missing.
func TestEachCheckCanFail(t *testing.T) {
	const head = "# A story with a piece missing.\n\nadd-handler h1\n----\n\ncreate ns0/a ns0/b\n----\n\nstart\n----\n\n"
	stories := map[string]string{
		"does not parse":    "# x\n\nstart stack=nope\n----\n",
		"never disconnects": head + "delete ns0/b\n----\n",
		"no compaction":     head + "advance 1s\n----\n\ndisconnect\n----\n\ndelete ns0/b\n----\n\nreconnect\n----\n",
		"never reconnects":  head + "advance 1s\n----\n\ndisconnect\n----\n\ndelete ns0/b\n----\n\ncompact\n----\n",
		"nothing deleted":   head + "advance 1s\n----\n\ndisconnect\n----\n\nupdate ns0/a labels=(v=2)\n----\n\ncompact\n----\n\nreconnect\n----\n",
	}
	failed := map[int]bool{}
	for name, src := range stories {
		path := filepath.Join(t.TempDir(), "story.txt")
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		for i, r := range lab.Run(Checks(path)) {
			if r.Err != nil {
				failed[i] = true
				t.Logf("%s fails %s %s", name, r.ID, r.Behaviour)
			}
		}
	}
	for i, c := range Checks("solution/story.txt") {
		if !failed[i] {
			t.Errorf("%s %s: no story fails it", c.ID, c.Behaviour)
		}
	}
}
