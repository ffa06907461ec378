package difftest

import (
	"context"

	"github.com/go-logr/logr"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"
)

// Quiet silences client-go's logging and replaces utilruntime's error
// handlers with one that hands each error to its context's logger, which
// is the global one (silenced) unless a world gave that side a recording
// logger: then the reports are compared like panics (crashLogger). Call
// it from TestMain.
//
// The replacement matters beyond noise: the default handlers rate-limit
// with a clock primed in real time at init, and inside a testing/synctest
// bubble (fake time starting in 2000) the first HandleError would sleep
// for decades of fake time, so a harness waiting with synctest.Wait would
// see that goroutine as blocked (REFERENCE.md, "Easy to miss").
func Quiet() {
	klog.SetLogger(logr.Discard())
	utilruntime.ErrorHandlers = []utilruntime.ErrorHandler{
		func(ctx context.Context, err error, msg string, kv ...any) {
			// As utilruntime's own logError: the report's site is the
			// caller of HandleError* (handler <- handleError <-
			// HandleError* <- caller).
			klog.FromContext(ctx).WithCallDepth(3).Error(err, msg, kv...)
		},
	}
}

// Reports records what the code under test reports outside its return
// values: errors handed to utilruntime's error handlers and level-0 Info
// lines through klog's global logger (the one a queue names and keeps when
// it is made). CaptureReports installs one; restore puts back what was
// there.
type Reports struct{ Log }

// CaptureReports starts recording reports. Call restore when done; the
// queues under test must be made after this call, since they keep the
// global logger they find.
func CaptureReports() (r *Reports, restore func()) {
	r = &Reports{}
	savedHandlers, savedLogger := utilruntime.ErrorHandlers, klog.Background()
	utilruntime.ErrorHandlers = []utilruntime.ErrorHandler{func(_ context.Context, err error, msg string, kv ...any) {
		r.Add("error %q err=%v %v @%s", msg, err, kv, HandledSite())
	}}
	klog.SetLogger(InfoLogger(&r.Log))
	return r, func() {
		utilruntime.ErrorHandlers = savedHandlers
		klog.SetLogger(savedLogger)
	}
}
