package difftest

import (
	"context"

	"github.com/go-logr/logr"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"
)

// Quiet silences client-go's logging and replaces utilruntime's error
// handlers with one that does nothing. Call it from TestMain.
//
// The replacement matters beyond noise: the default handlers rate-limit
// with a clock primed in real time at init, and inside a testing/synctest
// bubble (fake time starting in 2000) the first HandleError would sleep
// for decades of fake time, so a harness waiting with synctest.Wait would
// see that goroutine as blocked (REFERENCE.md, "Easy to miss").
func Quiet() {
	klog.SetLogger(logr.Discard())
	utilruntime.ErrorHandlers = []utilruntime.ErrorHandler{
		func(context.Context, error, string, ...any) {},
	}
}
