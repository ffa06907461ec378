//go:build lab

package exercise

import (
	"os"
	"testing"

	"github.com/cachelab/cachelab/notebooks/internal/lab"
)

// TestLab runs your story.txt with cachelab and client-go side by side:
//
//	go test -tags lab -v ./notebooks/06-failure-stories/exercise
func TestLab(t *testing.T) {
	rs := lab.Run(Checks("story.txt"))
	lab.Report(os.Stdout, "Chapter 6 lab: a missed-delete story", rs)
	if !lab.Passed(rs) {
		t.Fail()
	}
}
