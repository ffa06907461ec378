package controller_test

import (
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/cachelab/cachelab/informer"
	dt "github.com/cachelab/cachelab/internal/difftest"
)

var (
	pod        = dt.Pod
	bothStacks = []informer.Stack{informer.Default, informer.Classic}
	gone       = &apierrors.NewResourceExpired("too old resource version").ErrStatus
)

// sample-controller: enqueue, processNextWorkItem (K1, K2, K3): every
// event queues the key; the reconcile reads the cache, not the event, and
// a success forgets the key and marks it done.
func TestEventsBecomeReconciles(t *testing.T) {
	inCtl(t, bothStacks, ctlConfig{}, func(w *ctlWorld) {
		w.Create(pod("ns/a"))
		w.Start()
		w.Update(pod("ns/a", dt.Label("v", "2")))
		w.Settle()
		w.Delete(pod("ns/a"))
		w.Settle()
		w.Create(pod("node-1")) // cluster-scoped: the key is the name
		w.Settle()
	}, "handler: enqueue ns/a add", "handler: enqueue node-1 add", "reconcile: read node-1 node-1@5", "reconcile: read ns/a ns/a@2",
		"handler: enqueue ns/a update", "reconcile: read ns/a ns/a@3",
		"handler: enqueue ns/a delete", "reconcile: read ns/a not found",
		"reconcile: returned ns/a ok\n+0s workqueue: forget ns/a\n+0s workqueue: done ns/a")
}

// queue.go Add, Done (W1, W2); sample-controller (K1, K2): updates made
// while a worker holds the key coalesce into one more reconcile, which
// reads only the latest version (level-triggered).
func TestUpdatesWhileHeldCollapse(t *testing.T) {
	inCtl(t, bothStacks, ctlConfig{Script: map[string][]step{"ns/a": {ok, block()}}}, func(w *ctlWorld) {
		w.Create(pod("ns/a"))
		w.Start()
		w.Update(pod("ns/a", dt.Label("v", "2"))) // the second reconcile blocks holding ns/a
		w.Settle()
		for _, v := range []string{"3", "4", "5"} {
			w.Update(pod("ns/a", dt.Label("v", v)))
			w.Settle()
		}
		w.Unblock()
	}, "reconcile: read ns/a ns/a@3", "handler: enqueue ns/a update\nunblock reconciles",
		"workqueue: done ns/a\n+0s workqueue: get ns/a\n+0s reconcile: read ns/a ns/a@6\n")
}

// rate_limiting_queue.go, default_rate_limiters.go (K3, W13, W17);
// sample-controller processNextWorkItem: a failing key backs off 5ms,
// 10ms, 20ms; a success forgets it, so its next failure starts at 5ms
// again.
func TestFailuresBackOffAndSuccessForgets(t *testing.T) {
	script := map[string][]step{"ns/a": {fail("x"), fail("x"), fail("x"), ok, fail("y")}}
	inCtl(t, bothStacks, ctlConfig{Script: script}, func(w *ctlWorld) {
		w.Create(pod("ns/a"))
		w.Start()
		w.Advance(time.Second)
		w.Update(pod("ns/a", dt.Label("v", "2")))
		w.Settle()
		w.Advance(time.Second)
	}, "+0s workqueue: requeue-rate-limited ns/a 5ms",
		"+5ms workqueue: requeue-rate-limited ns/a 10ms",
		"+15ms workqueue: requeue-rate-limited ns/a 20ms",
		"+35ms reconcile: returned ns/a ok",
		"+1s workqueue: requeue-rate-limited ns/a 5ms",
		"+1.005s reconcile: returned ns/a ok")
}

// controller-runtime reconcileHandler (K4, K5): RequeueAfter on success
// forgets the failures and comes back after exactly that long; with an
// error the error wins, the delay is dropped and the key backs off.
func TestRequeueAfter(t *testing.T) {
	script := map[string][]step{
		"ns/a": {fail("x"), after(2 * time.Second)},
		"ns/b": {failAfter(time.Hour)},
	}
	inCtl(t, bothStacks, ctlConfig{Script: script}, func(w *ctlWorld) {
		w.Create(pod("ns/a"))
		w.Start()
		w.Advance(time.Second)
		w.Advance(time.Second)
		w.Create(pod("ns/b"))
		w.Settle()
		w.Advance(time.Second)
	}, "+5ms reconcile: returned ns/a requeue-after 2s\n+5ms workqueue: forget ns/a\n+5ms workqueue: add-after ns/a 2s",
		"+2.005s reconcile: returned ns/a ok",
		"reconcile: returned ns/b error \"boom\" (requeue-after 1h0m0s ignored)\n+2s workqueue: requeue-rate-limited ns/b 5ms",
		"+2.005s reconcile: returned ns/b ok")
}

// delta_fifo.go Replace, controller.go processReplacedAllInfo (P3);
// DeletionHandlingMetaNamespaceKeyFunc (K1): a delete missed while the
// watch was down reaches the handler as a tombstone, which still yields
// the key; the reconcile finds the key gone from the cache.
func TestTombstoneIsAKey(t *testing.T) {
	inCtl(t, bothStacks, ctlConfig{}, func(w *ctlWorld) {
		w.Create(pod("ns/a"))
		w.Create(pod("ns/b"))
		w.Start()
		w.Both("break watches with 410", func(s *dt.Server) { s.BreakWatches(gone) })
		w.Settle()
		w.Delete(pod("ns/b"))
		w.Both("compact", (*dt.Server).Compact)
		w.Advance(1600 * time.Millisecond)
	}, "handler: enqueue ns/b tombstone", "reconcile: read ns/b not found")
}

// queue.go (W2), sample-controller Run (K2): three workers, three keys
// failing differently; each key's own sequence is the same on both sides,
// while the order across keys is left free.
func TestSeveralWorkers(t *testing.T) {
	script := map[string][]step{
		"ns/a": {fail("x"), fail("x")},
		"ns/b": {after(10 * time.Millisecond), fail("x")},
		"ns/c": {ok, after(time.Millisecond)},
		"ns/d": {fail("x"), after(5 * time.Millisecond)},
	}
	inCtl(t, bothStacks, ctlConfig{Workers: 3, Script: script}, func(w *ctlWorld) {
		for _, k := range []string{"ns/a", "ns/b", "ns/c", "ns/d"} {
			w.Create(pod(k))
		}
		w.Start()
		w.Advance(time.Second)
		w.Update(pod("ns/c", dt.Label("v", "2")))
		w.Settle()
		w.Advance(time.Second)
	}, "+15ms reconcile: returned ns/a ok", "+15ms reconcile: returned ns/b ok",
		"+10ms reconcile: returned ns/d ok")
}
