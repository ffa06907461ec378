package sim

import (
	"flag"
	"testing"

	"go.uber.org/goleak"

	"github.com/cachelab/cachelab/internal/loadgen"
)

// Every run must stop everything it started: etcd, both informers, every
// watch relay and every handler held by the scenario.
func TestMain(m *testing.M) {
	loadgen.MaybeRun() // a test's load process (load_test.go) runs no tests
	flag.Parse()
	setParallel() // parallel_test.go
	goleak.VerifyTestMain(m)
}
