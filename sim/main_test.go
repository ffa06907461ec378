package sim

import (
	"testing"

	"go.uber.org/goleak"
)

// Every run must stop everything it started: etcd, both informers, every
// watch relay and every handler held by the scenario.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
