// Package cgloop is the reference controller loop: the loop
// kubernetes/sample-controller writes by hand, on client-go's informer and
// util/workqueue, with controller-runtime's requeue rules (an error wins
// over RequeueAfter) and the staleness guard spelled out with client-go's
// Store.LastStoreSyncResourceVersion and apimachinery's
// CompareResourceVersion. controller/'s differential tests and the
// simulator run it beside cachelab's controller/ and compare the
// controller.Events both report, step by step.
//
// It is a reference, not part of cachelab's from-scratch stack: it imports
// client-go, as the tests and the simulator may.
package cgloop

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/resourceversion"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/cachelab/cachelab/controller"
)

// Options configures a Controller, as controller.Options does cachelab's.
type Options struct {
	Reconcile      controller.ReconcileFunc
	Workers        int  // 0 means 1
	StalenessGuard bool // K7, K8
	// SkipForget reproduces the bug controller.Options.SkipForget
	// teaches: success does not call Forget.
	SkipForget bool
	// Trace, if set, hears every step, in controller.Event's words.
	Trace func(controller.Event)
	// DelayingQueue, if set, is the delaying queue under the rate-limiting
	// one (a simulator makes it on the scenario's clock); nil means
	// client-go's default, on the real clock.
	DelayingQueue workqueue.TypedDelayingInterface[string]
	// WrapHandler, if set, stands between the informer and the loop's
	// handler, as controller.Options.WrapHandler does.
	WrapHandler func(cache.ResourceEventHandler) cache.ResourceEventHandler
}

// Controller is sample-controller's loop on client-go's parts.
type Controller struct {
	informer   cache.SharedIndexInformer
	reg        cache.ResourceEventHandlerRegistration
	queue      workqueue.TypedRateLimitingInterface[string]
	reconcile  controller.ReconcileFunc
	workers    int
	guard      bool
	skipForget bool
	mu         sync.Mutex
	writes     map[string]string // the guard: key -> resourceVersion of our last write
	trace      func(controller.Event)
}

// New builds the loop and registers its handler with inf.
func New(inf cache.SharedIndexInformer, opts Options) (*Controller, error) {
	if opts.Reconcile == nil {
		return nil, controller.ErrNoReconcile
	}
	c := &Controller{informer: inf, reconcile: opts.Reconcile, workers: max(opts.Workers, 1), guard: opts.StalenessGuard,
		skipForget: opts.SkipForget, writes: map[string]string{}, trace: opts.Trace}
	if c.trace == nil {
		c.trace = func(controller.Event) {}
	}
	limiter := tracedLimiter{workqueue.DefaultTypedControllerRateLimiter[string](), c.trace}
	c.queue = workqueue.NewTypedRateLimitingQueueWithConfig[string](limiter,
		workqueue.TypedRateLimitingQueueConfig[string]{DelayingQueue: opts.DelayingQueue})
	var h cache.ResourceEventHandler = Handler{c}
	if opts.WrapHandler != nil {
		h = opts.WrapHandler(h)
	}
	reg, err := inf.AddEventHandler(h)
	if err != nil {
		c.queue.ShutDown()
		return nil, err
	}
	c.reg = reg
	return c, nil
}

// Queue is the loop's rate-limiting queue.
func (c *Controller) Queue() workqueue.TypedRateLimitingInterface[string] { return c.queue }

// Run waits for the handler's initial list, runs the workers until ctx
// ends, then shuts the queue down with drain and removes the handler.
func (c *Controller) Run(ctx context.Context) bool {
	defer c.ShutDown()
	if !cache.WaitFor(ctx, "", c.reg.HasSyncedChecker()) {
		return false
	}
	var wg sync.WaitGroup
	for range c.workers {
		wg.Go(func() {
			for c.ProcessNextWorkItem(ctx) {
			}
		})
	}
	<-ctx.Done()
	c.queue.ShutDownWithDrain()
	wg.Wait()
	return true
}

// ShutDown shuts the queue down and removes the handler.
func (c *Controller) ShutDown() {
	c.queue.ShutDown()
	_ = c.informer.RemoveEventHandler(c.reg)
}

// ProcessNextWorkItem is sample-controller's processNextWorkItem, with
// controller-runtime's requeue rules.
func (c *Controller) ProcessNextWorkItem(ctx context.Context) bool {
	key, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	c.trace(controller.Event{Kind: controller.Get, Key: key})
	defer func() {
		c.queue.Done(key)
		c.trace(controller.Event{Kind: controller.Done, Key: key})
	}()
	if why, stale := c.stale(key); stale {
		c.trace(controller.Event{Kind: controller.Stale, Key: key, Detail: why})
		c.queue.AddRateLimited(key)
		return true
	}
	res, err := c.reconcile(ctx, key)
	if c.guard && res.Wrote != "" {
		c.mu.Lock()
		c.writes[key] = res.Wrote
		c.mu.Unlock()
	}
	c.trace(controller.Event{Kind: controller.Reconciled, Key: key, Result: res, Err: err})
	switch {
	case err != nil:
		c.queue.AddRateLimited(key)
	case res.RequeueAfter > 0:
		c.forget(key)
		c.trace(controller.Event{Kind: controller.AddAfter, Key: key, Delay: res.RequeueAfter})
		c.queue.AddAfter(key, res.RequeueAfter)
	default:
		c.forget(key)
	}
	return true
}

func (c *Controller) forget(key string) {
	if c.skipForget {
		return
	}
	c.queue.Forget(key)
	c.trace(controller.Event{Kind: controller.Forget, Key: key})
}

// stale is the guard with client-go's parts: the store's
// LastStoreSyncResourceVersion and apimachinery's comparison.
func (c *Controller) stale(key string) (string, bool) {
	if !c.guard {
		return "", false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	written, ok := c.writes[key]
	if !ok {
		return "", false
	}
	synced := c.informer.GetStore().LastStoreSyncResourceVersion()
	if order, err := resourceversion.CompareResourceVersion(synced, written); err == nil && order < 0 {
		return "store@" + synced + " < wrote@" + written, true
	}
	delete(c.writes, key)
	return "", false
}

// Handler is sample-controller's enqueue: every event queues the
// object's key, a tombstone's too.
type Handler struct{ c *Controller }

func (h Handler) OnAdd(obj any, _ bool)  { h.enqueue(obj, "add") }
func (h Handler) OnUpdate(_, newObj any) { h.enqueue(newObj, "update") }
func (h Handler) OnDelete(obj any) {
	if _, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		h.enqueue(obj, "tombstone")
		return
	}
	h.enqueue(obj, "delete")
}

func (h Handler) enqueue(obj any, cause string) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleError(err)
		h.c.trace(controller.Event{Kind: controller.Unkeyable, Detail: cause})
		return
	}
	h.c.trace(controller.Event{Kind: controller.Enqueue, Key: key, Detail: cause})
	h.c.queue.Add(key)
}

// tracedLimiter tells the trace each delay the limiter hands out.
type tracedLimiter struct {
	workqueue.TypedRateLimiter[string]
	trace func(controller.Event)
}

func (l tracedLimiter) When(key string) time.Duration {
	d := l.TypedRateLimiter.When(key)
	l.trace(controller.Event{Kind: controller.RateLimited, Key: key, Delay: d})
	return d
}
