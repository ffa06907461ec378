//go:build lab

package exercise

import (
	"os"
	"testing"

	"github.com/cachelab/cachelab/notebooks/internal/lab"
)

// TestLab checks your Predict against kube-apiserver's watch cache:
//
//	go test -tags lab -v ./notebooks/07-watch-cache/exercise
func TestLab(t *testing.T) {
	rs := lab.Run(Checks(Predict))
	lab.ReportAgainst(os.Stdout, "Chapter 7 lab: where a LIST is answered, and with what", "kube-apiserver", rs)
	if !lab.Passed(rs) {
		t.Fail()
	}
}
