package controller_test

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

// cgController is the other side of the differential tests: the same
// loop written the way kubernetes/sample-controller writes it, on
// client-go's informer and workqueue, with the requeue rules of
// controller-runtime's reconcileHandler (an error wins over RequeueAfter)
// and the staleness guard spelled out with apimachinery's
// CompareResourceVersion. It reports the same Events as cachelab's
// Controller, so the two traces can be compared line by line.
type cgController struct {
	informer  cache.SharedIndexInformer
	reg       cache.ResourceEventHandlerRegistration
	queue     workqueue.TypedRateLimitingInterface[string]
	reconcile controller.ReconcileFunc
	workers   int
	guard     bool
	mu        sync.Mutex
	writes    map[string]string
	trace     func(controller.Event)
}

func newCGController(inf cache.SharedIndexInformer, opts controller.Options) *cgController {
	c := &cgController{informer: inf, reconcile: opts.Reconcile, workers: max(opts.Workers, 1),
		guard: opts.StalenessGuard, writes: map[string]string{}, trace: opts.Trace}
	limiter := workqueue.DefaultTypedControllerRateLimiter[string]()
	c.queue = workqueue.NewTypedRateLimitingQueueWithConfig[string](cgTracedLimiter{limiter, c.trace},
		workqueue.TypedRateLimitingQueueConfig[string]{})
	reg, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.enqueue(obj, "add") },
		UpdateFunc: func(_, obj any) { c.enqueue(obj, "update") },
		DeleteFunc: func(obj any) {
			if _, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				c.enqueue(obj, "tombstone")
				return
			}
			c.enqueue(obj, "delete")
		},
	})
	if err != nil {
		panic(err)
	}
	c.reg = reg
	return c
}

func (c *cgController) enqueue(obj any, cause string) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleError(err)
		c.trace(controller.Event{Kind: controller.Unkeyable, Detail: cause})
		return
	}
	c.trace(controller.Event{Kind: controller.Enqueue, Key: key, Detail: cause})
	c.queue.Add(key)
}

func (c *cgController) Run(ctx context.Context) bool {
	defer func() {
		c.queue.ShutDown()
		_ = c.informer.RemoveEventHandler(c.reg)
	}()
	if !cache.WaitFor(ctx, "", c.reg.HasSyncedChecker()) {
		return false
	}
	var wg sync.WaitGroup
	for range c.workers {
		wg.Go(func() {
			for c.processNextWorkItem(ctx) {
			}
		})
	}
	<-ctx.Done()
	c.queue.ShutDownWithDrain()
	wg.Wait()
	return true
}

func (c *cgController) processNextWorkItem(ctx context.Context) bool {
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
		c.queue.Forget(key)
		c.trace(controller.Event{Kind: controller.Forget, Key: key})
		c.trace(controller.Event{Kind: controller.AddAfter, Key: key, Delay: res.RequeueAfter})
		c.queue.AddAfter(key, res.RequeueAfter)
	default:
		c.queue.Forget(key)
		c.trace(controller.Event{Kind: controller.Forget, Key: key})
	}
	return true
}

// stale is the guard with client-go's parts: the store's
// LastStoreSyncResourceVersion and apimachinery's comparison.
func (c *cgController) stale(key string) (string, bool) {
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

type cgTracedLimiter struct {
	workqueue.TypedRateLimiter[string]
	trace func(controller.Event)
}

func (l cgTracedLimiter) When(key string) time.Duration {
	d := l.TypedRateLimiter.When(key)
	l.trace(controller.Event{Kind: controller.RateLimited, Key: key, Delay: d})
	return d
}
