//go:build lab

package exercise_test

import (
	"os"
	"testing"

	"github.com/cachelab/cachelab/notebooks/04-reflector/exercise"
	"github.com/cachelab/cachelab/notebooks/internal/lab"
)

// TestLab checks your AfterWatch against client-go:
//
//	go test -tags lab -v ./notebooks/04-reflector/exercise
func TestLab(t *testing.T) {
	rs := lab.Run(exercise.Checks(t, exercise.Yours))
	lab.Report(os.Stdout, "Chapter 4 lab: after a watch ends", rs)
	if !lab.Passed(rs) {
		t.Fail()
	}
}
