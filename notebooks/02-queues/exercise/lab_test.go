//go:build lab

package exercise

import (
	"os"
	"testing"

	"github.com/cachelab/cachelab/notebooks/internal/lab"
)

// TestLab checks your Pops against client-go's DeltaFIFO:
//
//	go test -tags lab -v ./notebooks/02-queues/exercise
func TestLab(t *testing.T) {
	rs := lab.Run(Checks(Pops))
	lab.Report(os.Stdout, "Chapter 2 lab: what a DeltaFIFO pops", rs)
	if !lab.Passed(rs) {
		t.Fail()
	}
}
