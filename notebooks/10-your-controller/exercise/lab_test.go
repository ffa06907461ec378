//go:build lab

package exercise

import (
	"os"
	"testing"

	"github.com/cachelab/cachelab/notebooks/internal/lab"
)

// TestLab plays fooctl's story around your Reconcile and OnDelete, and
// checks every invariant:
//
//	go test -tags lab -v ./notebooks/10-your-controller/exercise
func TestLab(t *testing.T) {
	rs := lab.Run(Checks(Yours()))
	lab.ReportInvariants(os.Stdout, "Chapter 10 lab: your controller under every fault", rs)
	if !lab.Passed(rs) {
		t.Fail()
	}
}
