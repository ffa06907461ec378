//go:build lab

package exercise

import (
	"os"
	"testing"

	"github.com/cachelab/cachelab/notebooks/internal/lab"
)

// TestLab checks your LosesDelete against what the explorer finds:
//
//	go test -tags lab -v ./notebooks/09-exploring/exercise
func TestLab(t *testing.T) {
	rs := lab.Run(Checks(LosesDelete))
	lab.ReportAgainst(os.Stdout, "Chapter 9 lab: which disconnects lose a delete", "the explorer", rs)
	if !lab.Passed(rs) {
		t.Fail()
	}
}
