//go:build lab

package exercise

import (
	"os"
	"testing"

	"github.com/cachelab/cachelab/notebooks/internal/lab"
)

// TestLab checks your ListAll against client-go's pager:
//
//	go test -tags lab -v ./notebooks/03-listerwatcher/exercise
func TestLab(t *testing.T) {
	rs := lab.Run(Checks(ListAll))
	lab.Report(os.Stdout, "Chapter 3 lab: a pager", rs)
	if !lab.Passed(rs) {
		t.Fail()
	}
}
