package controller_test

import (
	"testing"
	"time"

	dt "github.com/cachelab/cachelab/internal/difftest"
)

// queue.go ShutDownWithDrain (W3, W6, W10); controller-runtime Start
// (K9): when the context ends, the queue stops taking keys (a handler's
// Add is ignored), Run waits for the key a worker holds, the worker still
// drains what was queued before, a key waiting for its RequeueAfter is
// dropped, and Run returns only when every worker has.
func TestShutdownDrains(t *testing.T) {
	script := map[string][]step{"ns/a": {block()}, "ns/c": {after(time.Hour)}}
	inCtl(t, bothStacks, ctlConfig{Script: script}, func(w *ctlWorld) {
		w.Create(pod("ns/c"))
		w.Start() // ns/c waits an hour
		w.Create(pod("ns/a"))
		w.Settle() // ns/a is held by the only worker
		w.Create(pod("ns/b"))
		w.Settle() // ns/b is queued
		w.CancelControllers()
		if n := w.runs.Load(); n != 0 {
			t.Errorf("%d Run returned while a worker held ns/a; want none", n)
		}
		w.Update(pod("ns/b", dt.Label("v", "2")))
		w.Settle()
		w.Unblock()
		if n := w.runs.Load(); n != 2 {
			t.Errorf("%d Run returned after the workers drained; want 2", n)
		}
	}, "cancel controllers", "handler: enqueue ns/b update\nunblock reconciles",
		"+0s reconcile: returned ns/a ok\n+0s workqueue: forget ns/a\n+0s workqueue: done ns/a\n+0s workqueue: get ns/b\n+0s reconcile: read ns/b ns/b@5")
}
