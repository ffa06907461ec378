//go:build lab

package exercise

import (
	"os"
	"testing"

	"github.com/cachelab/cachelab/notebooks/01-objects-keys-indexer/exercise/solution"
	"github.com/cachelab/cachelab/notebooks/internal/lab"
)

// TestLab checks your KeyFunc and AppIndex:
//
//	go test -tags lab ./notebooks/01-objects-keys-indexer/exercise
func TestLab(t *testing.T) {
	rs := lab.Run(Checks(Yours, Impl{KeyFunc: solution.KeyFunc, AppIndex: solution.AppIndex}))
	lab.Report(os.Stdout, "Chapter 1 lab: keys and indexes", rs)
	if !lab.Passed(rs) {
		t.Fail()
	}
}
