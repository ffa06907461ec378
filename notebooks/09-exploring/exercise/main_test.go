package exercise

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/cachelab/cachelab/internal/difftest"
)

// The checks explore a scenario: every run starts an etcd and two
// informers, and none may leave a goroutine behind. (The informers log
// through klog: keep it off stderr.)
func TestMain(m *testing.M) {
	difftest.Quiet()
	goleak.VerifyTestMain(m)
}
