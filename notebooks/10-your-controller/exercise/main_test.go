package exercise

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/cachelab/cachelab/internal/difftest"
)

// The checks play a story around an operator: every run starts an etcd,
// kube-apiserver and the operator, and none may leave a goroutine
// behind. (They log through klog: keep it off stderr.)
func TestMain(m *testing.M) {
	difftest.Quiet()
	goleak.VerifyTestMain(m)
}
