package controller

import (
	"context"
	"errors"
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/cachelab/cachelab/informer"
	"github.com/cachelab/cachelab/workqueue"
)

// Result is what a reconcile asks of the loop besides its error.
type Result struct {
	// RequeueAfter > 0 asks to reconcile the key again after this long,
	// on success: the loop forgets the key's failures and calls AddAfter
	// (K4). With an error it is ignored (K5).
	RequeueAfter time.Duration
	// Wrote is the resourceVersion the server gave this reconcile's own
	// write of the key's object, if it wrote one. The staleness guard
	// remembers it (K7).
	Wrote string
}

// ReconcileFunc makes the world match the object named by key, reading
// the object from the cache (a Lister over the informer's indexer), never
// from the event that queued the key: the key may have been queued by many
// events, or by a delete, and only the cache says what is true now. It is
// called by one worker at a time per key (W2).
type ReconcileFunc func(ctx context.Context, key string) (Result, error)

// ErrNoReconcile is returned by New when Options.Reconcile is nil.
var ErrNoReconcile = errors.New("controller: Options.Reconcile is nil")

// ErrNoInformer is returned by New when Options.Informer is nil.
var ErrNoInformer = errors.New("controller: Options.Informer is nil")

// Options configures a Controller.
type Options struct {
	// Informer is the cache the controller reads and the source of its
	// events. The controller adds a handler to it; Run does not start it.
	Informer *informer.SharedIndexInformer
	// Reconcile is called for every key taken from the queue.
	Reconcile ReconcileFunc
	// Workers is how many goroutines reconcile at once; 0 means 1.
	Workers int
	// RateLimiter decides how long a failing key waits; nil means
	// workqueue.DefaultControllerRateLimiter (5ms doubling to 1000s, and
	// 10 per second overall after a burst of 100; W17), its bucket on
	// Clock.
	RateLimiter workqueue.RateLimiter[string]
	// Clock runs the queue's delays; nil means the real clock.
	Clock clock.WithTicker
	// StalenessGuard turns on the guard (K7, K8): a key whose last write
	// by this controller the cache has not yet seen is not reconciled
	// but requeued, rate-limited.
	StalenessGuard bool
	// Trace, if set, hears every step (see Event).
	Trace func(Event)
	// SkipForget is a teaching switch that reproduces a common bug: on
	// success the loop does not call Forget, so the key's failures are
	// never forgotten and its next failure backs off from where the last
	// one stopped, longer every time (K3). Never set it in a real
	// controller.
	SkipForget bool
	// Manual makes the queue's delays wait for the caller: a key given
	// AddAfter or AddRateLimited is added once Flush is called at or
	// after its time (workqueue.Options.Manual). For a simulator that
	// steps the loop with ProcessNextWorkItem on a fake clock; Run never
	// flushes.
	Manual bool
	// WrapHandler, if set, stands between the informer and the
	// controller's handler: the informer is given WrapHandler(h). A
	// simulator uses it to see each call, or to hold calls and hand
	// them on later.
	WrapHandler func(informer.ResourceEventHandler) informer.ResourceEventHandler
}

// Controller is the loop between an informer and a reconcile function:
// the informer's events become keys on a rate-limiting workqueue, and
// workers reconcile each key from the cache.
//
//	informer ──handler──▶ queue.Add(key) ──Get──▶ worker ──▶ reconcile(key)
//	                          ▲                               │
//	                          └── AddRateLimited / AddAfter ◀─┘ (error / requeue-after)
type Controller struct {
	informer  *informer.SharedIndexInformer
	reg       informer.Registration
	queue     *workqueue.RateLimitingQueue[string]
	reconcile ReconcileFunc
	workers   int
	guard     *guard // nil when the guard is off
	trace     func(Event)
	noForget  bool // Options.SkipForget
}

// New builds a controller and registers its handler with the informer,
// so keys are queued from now on; nothing is reconciled until Run.
func New(ctx context.Context, opts Options) (*Controller, error) {
	if opts.Reconcile == nil {
		return nil, ErrNoReconcile
	}
	if opts.Informer == nil {
		return nil, ErrNoInformer
	}
	c := &Controller{informer: opts.Informer, reconcile: opts.Reconcile, workers: max(opts.Workers, 1), trace: opts.Trace,
		noForget: opts.SkipForget}
	if c.trace == nil {
		c.trace = func(Event) {}
	}
	limiter := opts.RateLimiter
	if limiter == nil {
		limiter = defaultLimiter(opts.Clock)
	}
	c.queue = workqueue.NewRateLimiting[string](tracedLimiter{limiter, c.trace}, workqueue.Options{Clock: opts.Clock, Manual: opts.Manual})
	if opts.StalenessGuard {
		c.guard = newGuard(opts.Informer.GetIndexer())
	}
	var h informer.ResourceEventHandler = handler{ctx: ctx, c: c}
	if opts.WrapHandler != nil {
		h = opts.WrapHandler(h)
	}
	reg, err := opts.Informer.AddEventHandler(h)
	if err != nil {
		c.queue.ShutDown()
		return nil, err
	}
	c.reg = reg
	return c, nil
}

// defaultLimiter is workqueue.DefaultControllerRateLimiter with its
// token bucket on clk, so that a fake clock moves all of the backoff.
func defaultLimiter(clk clock.WithTicker) workqueue.RateLimiter[string] {
	if clk == nil {
		return workqueue.DefaultControllerRateLimiter[string]()
	}
	return workqueue.NewMaxOfRateLimiter(
		workqueue.NewItemExponentialFailureRateLimiter[string](5*time.Millisecond, 1000*time.Second),
		workqueue.NewBucketRateLimiter[string](workqueue.BucketOptions{QPS: 10, Burst: 100, Clock: clk}),
	)
}

// Flush adds every key whose delay has passed on the clock to the queue
// (workqueue.DelayingQueue.Flush) and says how long until the next one is
// due; with Options.Manual nothing else does.
func (c *Controller) Flush() (next time.Duration, waiting bool) { return c.queue.Flush() }

// Queue is the controller's workqueue, for tests and simulators that
// look at it or step the loop by hand (ProcessNextWorkItem).
func (c *Controller) Queue() *workqueue.RateLimitingQueue[string] { return c.queue }

// HasSyncedChecker is done once the controller's handler has been told
// of everything in the informer's initial list: from then on the queue
// holds a key for every cached object. Run waits for it; a test that
// steps the loop with ProcessNextWorkItem does too.
func (c *Controller) HasSyncedChecker() informer.DoneChecker { return c.reg.HasSyncedChecker() }

// Run waits until the handler has been told of everything in the
// informer's initial list, starts the workers, and blocks until ctx ends.
// Then it shuts the queue down with drain (no new keys; workers finish the
// key they hold and whatever is already queued), waits for every worker
// to return, and removes its handler (K9). It returns false if ctx ended
// before the cache synced.
func (c *Controller) Run(ctx context.Context) bool {
	defer c.ShutDown()
	if !informer.WaitFor(ctx, "", c.HasSyncedChecker()) {
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

// ShutDown shuts the queue down (again, after Run: a second ShutDown does
// nothing) and removes the handler, so the informer forgets the
// controller. Run does it as it returns; a caller that steps the loop
// with ProcessNextWorkItem calls it when done.
func (c *Controller) ShutDown() {
	c.queue.ShutDown()
	_ = c.informer.RemoveEventHandler(c.reg) // fails only for a registration it does not know
}
