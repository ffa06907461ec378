package sim

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/cachelab/cachelab/internal/loadgen"
	"github.com/cachelab/cachelab/internal/testparallel"
)

// Every run must stop everything it started: etcd, both informers, every
// watch relay and every handler held by the scenario.
func TestMain(m *testing.M) {
	loadgen.MaybeRun() // a test's load process (load_test.go) runs no tests
	// Runs overlap beyond the cores, one stack at a time
	// (parallel_test.go).
	stacks.limit = testparallel.Gated(defaultParallel)
	goleak.VerifyTestMain(m)
}
