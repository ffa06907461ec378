//go:build lab

package exercise

import (
	"os"
	"testing"

	"github.com/cachelab/cachelab/notebooks/internal/lab"
)

// TestLab checks your Limiter and ProcessNextWorkItem against
// client-go's:
//
//	go test -tags lab -v ./notebooks/08-reconcile/exercise
func TestLab(t *testing.T) {
	rs := lab.Run(Checks(Yours()))
	lab.Report(os.Stdout, "Chapter 8 lab: when a key comes back", rs)
	if !lab.Passed(rs) {
		t.Fail()
	}
}
