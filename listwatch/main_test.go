package listwatch_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/cachelab/cachelab/internal/difftest"
	"github.com/cachelab/cachelab/internal/testparallel"
)

// The tests that take seconds mostly wait on etcd: a cluster's members
// take about 5 s to let their peer connections go (stop.go), a narrowed
// request its rounds. They run side by side (t.Parallel), four at a time
// on any number of cores. Each starts its own etcd on ports of its own;
// nothing they change is process-wide.
func TestMain(m *testing.M) {
	difftest.Quiet()
	testparallel.Default("4")
	goleak.VerifyTestMain(m)
}
