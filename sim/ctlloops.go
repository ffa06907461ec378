package sim

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/resourceversion"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/cachelab/cachelab/controller"
	"github.com/cachelab/cachelab/informer"
)

// --- cachelab: controller/ on cachelab's informer ---

type cachelabCtl struct {
	c     *controller.Controller
	inner informer.ResourceEventHandler // the controller's own handler
	inf   *informer.SharedIndexInformer
}

func newCachelabCtl(ctx context.Context, side *ctlSide, inf cachelabInformer, clk *clocktesting.FakeClock) (*cachelabCtl, error) {
	l := &cachelabCtl{inf: inf.inf}
	c, err := controller.New(ctx, controller.Options{
		Informer: inf.inf,
		Reconcile: func(_ context.Context, key string) (controller.Result, error) {
			return side.reconcile(key)
		},
		Clock:          clk,
		Manual:         true,
		StalenessGuard: side.cfg.guard,
		SkipForget:     side.cfg.skipForget,
		Trace:          side.event,
		WrapHandler: func(h informer.ResourceEventHandler) informer.ResourceEventHandler {
			l.inner = h
			return side.held
		},
	})
	if err != nil {
		return nil, err
	}
	l.c = c
	return l, nil
}

func (l *cachelabCtl) handler() eventHandler                { return l.inner }
func (l *cachelabCtl) ready() int                           { return l.c.Queue().Len() }
func (l *cachelabCtl) process(ctx context.Context)          { l.c.ProcessNextWorkItem(ctx) }
func (l *cachelabCtl) numRequeues(key string) int           { return l.c.Queue().NumRequeues(key) }
func (l *cachelabCtl) shutdown()                            { l.c.Queue().ShutDown() }
func (l *cachelabCtl) lookup(key string) (any, bool, error) { return l.inf.GetIndexer().GetByKey(key) }
func (l *cachelabCtl) flush() (time.Duration, bool, error) {
	next, waiting := l.c.Flush()
	return next, waiting, nil
}

// --- client-go: the same loop on client-go's informer and util/workqueue ---

// clientGoCtl is the loop as kubernetes/sample-controller writes it, on
// client-go's informer and rate-limiting workqueue
// (DefaultTypedControllerRateLimiter), with controller-runtime's requeue
// rules (an error wins over RequeueAfter) and the staleness guard spelled
// out with client-go's Store.LastStoreSyncResourceVersion and
// apimachinery's CompareResourceVersion. It reports the same
// controller.Events as cachelab's controller.
type clientGoCtl struct {
	side    *ctlSide
	inf     cache.SharedIndexInformer
	reg     cache.ResourceEventHandlerRegistration
	queue   workqueue.TypedRateLimitingInterface[string]
	writes  map[string]string // the guard: key -> rv of our last write
	creator string            // the goroutine that made the delaying queue (see parked)
	timeout time.Duration
}

func newClientGoCtl(side *ctlSide, inf clientGoInformer, clk *clocktesting.FakeClock, timeout time.Duration) (*clientGoCtl, error) {
	l := &clientGoCtl{side: side, inf: inf.inf, writes: map[string]string{}, timeout: timeout}
	// The delaying queue's loop runs on the scenario's clock. Making it
	// on a goroutine of its own marks that loop's goroutine ("created by
	// ... in goroutine N"), so parked can find it.
	made := make(chan workqueue.TypedDelayingInterface[string])
	go func() {
		l.creator = goroutineID()
		made <- workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[string]{Clock: clk})
	}()
	dq := <-made
	l.queue = workqueue.NewTypedRateLimitingQueueWithConfig[string](
		cgTracedLimiter{workqueue.DefaultTypedControllerRateLimiter[string](), side.event},
		workqueue.TypedRateLimitingQueueConfig[string]{DelayingQueue: dq})
	reg, err := l.inf.AddEventHandler(side.held)
	if err != nil {
		l.queue.ShutDown()
		return nil, err
	}
	l.reg = reg
	return l, nil
}

func (l *clientGoCtl) handler() eventHandler { return cgHandler{l} }
func (l *clientGoCtl) ready() int            { return l.queue.Len() }
func (l *clientGoCtl) numRequeues(key string) int {
	return l.queue.NumRequeues(key)
}
func (l *clientGoCtl) shutdown() {
	l.queue.ShutDown()
	_ = l.inf.RemoveEventHandler(l.reg)
}
func (l *clientGoCtl) lookup(key string) (any, bool, error) { return l.inf.GetIndexer().GetByKey(key) }

// flush waits until the delaying queue's loop has taken in everything
// handed to it and every key whose time has come: client-go moves them
// on its own goroutine.
func (l *clientGoCtl) flush() (time.Duration, bool, error) {
	deadline := time.Now().Add(l.timeout)
	for !l.parked() {
		if time.Now().After(deadline) {
			return 0, false, fmt.Errorf("client-go's workqueue: its delaying loop did not settle within %v", l.timeout)
		}
		time.Sleep(time.Millisecond)
	}
	return 0, false, nil
}

// parked reports whether the delaying queue's loop waits in its select
// with nothing ready: the runtime makes a goroutine runnable in the same
// step as a send to it, so a parked loop has taken in every key handed
// over and every timer that fired (apistorage.Quiescent's method).
func (l *clientGoCtl) parked() bool {
	mark := "waitingLoop"
	creator := "in goroutine " + l.creator + "\n"
	for _, g := range allGoroutines() {
		if !strings.Contains(g, mark) || !strings.Contains(g+"\n", creator) {
			continue
		}
		header, _, _ := strings.Cut(g, "\n")
		return strings.Contains(header, "[select]") || strings.Contains(header, "[select, ")
	}
	return true // no loop: the queue is shut down
}

// process is sample-controller's processNextWorkItem.
func (l *clientGoCtl) process(ctx context.Context) {
	key, shutdown := l.queue.Get()
	if shutdown {
		return
	}
	trace := l.side.event
	trace(controller.Event{Kind: controller.Get, Key: key})
	defer func() {
		l.queue.Done(key)
		trace(controller.Event{Kind: controller.Done, Key: key})
	}()
	if why, stale := l.stale(key); stale {
		trace(controller.Event{Kind: controller.Stale, Key: key, Detail: why})
		l.queue.AddRateLimited(key)
		return
	}
	res, err := l.side.reconcile(key)
	if l.side.cfg.guard && res.Wrote != "" {
		l.writes[key] = res.Wrote
	}
	trace(controller.Event{Kind: controller.Reconciled, Key: key, Result: res, Err: err})
	forget := func() {
		if !l.side.cfg.skipForget {
			l.queue.Forget(key)
			trace(controller.Event{Kind: controller.Forget, Key: key})
		}
	}
	switch {
	case err != nil:
		l.queue.AddRateLimited(key)
	case res.RequeueAfter > 0:
		forget()
		trace(controller.Event{Kind: controller.AddAfter, Key: key, Delay: res.RequeueAfter})
		l.queue.AddAfter(key, res.RequeueAfter)
	default:
		forget()
	}
}

// stale is the guard with client-go's parts.
func (l *clientGoCtl) stale(key string) (string, bool) {
	written, ok := l.writes[key]
	if !l.side.cfg.guard || !ok {
		return "", false
	}
	synced := l.inf.GetStore().LastStoreSyncResourceVersion()
	if order, err := resourceversion.CompareResourceVersion(synced, written); err == nil && order < 0 {
		return "store@" + synced + " < wrote@" + written, true
	}
	delete(l.writes, key)
	return "", false
}

// cgHandler is sample-controller's enqueue, with the tombstone case.
type cgHandler struct{ l *clientGoCtl }

func (h cgHandler) OnAdd(obj any, _ bool)  { h.enqueue(obj, "add") }
func (h cgHandler) OnUpdate(_, newObj any) { h.enqueue(newObj, "update") }
func (h cgHandler) OnDelete(obj any) {
	if _, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		h.enqueue(obj, "tombstone")
		return
	}
	h.enqueue(obj, "delete")
}

func (h cgHandler) enqueue(obj any, cause string) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleError(err)
		h.l.side.event(controller.Event{Kind: controller.Unkeyable, Detail: cause})
		return
	}
	h.l.side.event(controller.Event{Kind: controller.Enqueue, Key: key, Detail: cause})
	h.l.queue.Add(key)
}

type cgTracedLimiter struct {
	workqueue.TypedRateLimiter[string]
	trace func(controller.Event)
}

func (l cgTracedLimiter) When(key string) time.Duration {
	d := l.TypedRateLimiter.When(key)
	l.trace(controller.Event{Kind: controller.RateLimited, Key: key, Delay: d})
	return d
}

// goroutineID is the calling goroutine's number, as stack dumps print it.
func goroutineID() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	id, _, _ := strings.Cut(strings.TrimPrefix(string(buf), "goroutine "), " ")
	return id
}

// allGoroutines is every goroutine's stack, taken with the world stopped.
func allGoroutines() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Split(string(buf[:n]), "\n\n")
		}
		buf = make([]byte, 2*len(buf))
	}
}
