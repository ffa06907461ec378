package yourcontroller_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/cachelab/cachelab/internal/difftest"
)

// Cells play a story around a controller: every run starts an etcd,
// kube-apiserver and the controller, and none may leave a goroutine
// behind, not even a play a cell started and no cell waited for. (They
// log through klog: keep it off stderr.)
func TestMain(m *testing.M) {
	difftest.Quiet()
	code := m.Run()
	finish()
	if err := goleak.Find(); code == 0 && err != nil {
		fmt.Fprintln(os.Stderr, "goleak:", err)
		code = 1
	}
	os.Exit(code)
}
