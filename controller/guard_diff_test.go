package controller_test

import (
	"testing"
	"time"
)

// staleScript: the first reconcile of ns/a comes back in 1s; the second
// writes ns/a (as a controller writes status) and comes back in 1s; the
// third is the one that may read the cache from before that write.
var staleScript = map[string][]step{"ns/a": {after(time.Second), {write: true, after: time.Second}}}

// staleSteps holds the watches before the write, so the informers lag
// behind it, and releases them half a second after the third reconcile.
func staleSteps(w *ctlWorld) {
	w.Create(pod("ns/a"))
	w.Start()
	w.HoldWatches()
	w.Advance(time.Second)
	w.Advance(time.Second)
	w.Advance(500 * time.Millisecond)
	w.ReleaseWatches()
	w.Advance(time.Second)
}

// The stale-controller problem (KEP-5647) that K7 guards against, shown
// without the guard: the third reconcile reads ns/a@2, the version from
// before its own write (rv 3), because the informer has not seen the
// write yet.
func TestStaleReadWithoutGuard(t *testing.T) {
	inCtl(t, bothStacks, ctlConfig{Script: staleScript}, staleSteps,
		"+1s reconcile: returned ns/a requeue-after 1s wrote@3",
		"+2s reconcile: read ns/a ns/a@2\n+2s reconcile: returned ns/a ok",
		"+2.5s handler: enqueue ns/a update\n+2.5s workqueue: get ns/a\n+2.5s reconcile: read ns/a ns/a@3")
}

// The staleness guard (K7, K8): with the write remembered, the third
// reconcile is held back while the store's LastStoreSyncResourceVersion
// (2) is older than the write (3), and requeued rate-limited (5ms, 10ms,
// ...). Once the informer has the write, the reconcile reads it, and the
// remembered write is dropped.
func TestStaleReadHeldBackByGuard(t *testing.T) {
	inCtl(t, bothStacks, ctlConfig{Script: staleScript, Guard: true}, staleSteps,
		"+2s workqueue: get ns/a\n+2s reconcile: stale ns/a store@2 < wrote@3\n+2s workqueue: requeue-rate-limited ns/a 5ms",
		"+2.315s reconcile: stale ns/a store@2 < wrote@3\n+2.315s workqueue: requeue-rate-limited ns/a 320ms",
		"+2.5s handler: enqueue ns/a update\n+2.5s workqueue: get ns/a\n+2.5s reconcile: read ns/a ns/a@3\n+2.5s reconcile: returned ns/a ok\n+2.5s workqueue: forget ns/a")
}
