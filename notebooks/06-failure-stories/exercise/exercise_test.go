//go:build !lab

// The maintainers' tests of the lab, which CI runs: the reference
// solution passes, the skeleton fails, every check can fail. The lab
// command (go test -tags lab) leaves them out, so that what it prints is
// the learner's sheet alone.

package exercise

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cachelab/cachelab/notebooks/internal/lab"
)

// The reference story passes every check.
func TestSolutionPasses(t *testing.T) {
	lab.SolutionPasses(t, Checks("solution/story.txt"))
}

// The skeleton as handed out, kept in skeleton/story.txt (the learner's
// file may be their work by now), fails the lab, and each failure says
// what client-go did instead.
func TestSkeletonFails(t *testing.T) {
	lab.SkeletonFails(t, Checks("skeleton/story.txt"))
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
	runs := map[string][]lab.Check{}
	for name, src := range stories {
		path := filepath.Join(t.TempDir(), name+".txt")
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		runs[name] = Checks(path)
	}
	lab.EachCanFail(t, Checks("solution/story.txt"), runs)
}
