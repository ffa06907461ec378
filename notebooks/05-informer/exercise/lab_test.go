//go:build lab

package exercise

import (
	"os"
	"testing"

	"github.com/cachelab/cachelab/notebooks/internal/lab"
)

// TestLab checks your Process against client-go's informer:
//
//	go test -tags lab -v ./notebooks/05-informer/exercise
func TestLab(t *testing.T) {
	rs := lab.Run(Checks(Process))
	lab.Report(os.Stdout, "Chapter 5 lab: what an informer does with a delta", rs)
	if !lab.Passed(rs) {
		t.Fail()
	}
}
