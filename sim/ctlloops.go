package sim

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"github.com/cachelab/cachelab/controller"
	"github.com/cachelab/cachelab/informer"
	"github.com/cachelab/cachelab/internal/cgloop"
	"github.com/cachelab/cachelab/internal/goroutines"
	"github.com/cachelab/cachelab/internal/scenarioclock"
)

// --- cachelab: controller/ on cachelab's informer ---

type cachelabCtl struct {
	c     *controller.Controller
	inner informer.ResourceEventHandler // the controller's own handler
	inf   *informer.SharedIndexInformer
}

func newCachelabCtl(ctx context.Context, side *ctlSide, inf cachelabInformer, clk *scenarioclock.Clock, plant func(*controller.Options)) (*cachelabCtl, error) {
	l := &cachelabCtl{inf: inf.inf}
	opts := controller.Options{
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
	}
	if plant != nil {
		plant(&opts)
	}
	c, err := controller.New(ctx, opts)
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
func (l *cachelabCtl) shutdown()                            { l.c.ShutDown() }
func (l *cachelabCtl) lookup(key string) (any, bool, error) { return l.inf.GetIndexer().GetByKey(key) }
func (l *cachelabCtl) flush() (time.Duration, bool, error) {
	next, waiting := l.c.Flush()
	return next, waiting, nil
}

// --- client-go: the same loop on client-go's informer and util/workqueue ---

// clientGoCtl is internal/cgloop's loop (sample-controller's, on
// client-go's informer and rate-limiting workqueue), its delaying queue on
// the scenario's clock.
type clientGoCtl struct {
	c       *cgloop.Controller
	inner   cache.ResourceEventHandler // the loop's own handler
	inf     cache.SharedIndexInformer
	creator string // the goroutine that made the delaying queue (see parked)
	shut    bool   // the queue is shut down: its loop has ended or is ending
	timeout time.Duration
	// clock and afters say what could have woken the delaying loop since
	// it was last found parked (parkedAt): the clock moving past one of
	// its timers, or a key handed to it with a delay.
	clock    *scenarioclock.Clock
	afters   *atomic.Int64
	parkedAt *loopMoment
}

// loopMoment is what the delaying loop had been given, and the clock's
// time, when it was found parked.
type loopMoment struct {
	afters int64
	now    time.Time
}

// countedAfters is a delaying queue that counts the keys handed to its
// loop: AddAfter with a delay (without one, a key goes to the queue
// itself, and the loop hears nothing).
type countedAfters struct {
	workqueue.TypedDelayingInterface[string]
	n *atomic.Int64
}

func (q countedAfters) AddAfter(key string, d time.Duration) {
	if d > 0 {
		q.n.Add(1)
	}
	q.TypedDelayingInterface.AddAfter(key, d)
}

func newClientGoCtl(side *ctlSide, inf clientGoInformer, clk *scenarioclock.Clock, timeout time.Duration) (*clientGoCtl, error) {
	l := &clientGoCtl{inf: inf.inf, timeout: timeout, clock: clk, afters: new(atomic.Int64)}
	// The delaying queue's loop runs on the scenario's clock. Making it
	// on a goroutine of its own marks that loop's goroutine ("created by
	// ... in goroutine N"), so parked can find it.
	made := make(chan workqueue.TypedDelayingInterface[string])
	go func() {
		l.creator = goroutines.Current()
		made <- workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[string]{Clock: heartbeatless{clk}})
	}()
	c, err := cgloop.New(inf.inf, cgloop.Options{
		Reconcile: func(_ context.Context, key string) (controller.Result, error) {
			return side.reconcile(key)
		},
		StalenessGuard: side.cfg.guard,
		SkipForget:     side.cfg.skipForget,
		Trace:          side.event,
		DelayingQueue:  countedAfters{<-made, l.afters},
		WrapHandler: func(h cache.ResourceEventHandler) cache.ResourceEventHandler {
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

// heartbeatless is the scenario's clock as client-go's delaying queue
// gets it: its loop's heartbeat (a ticker every 10 s, "insurance against
// weird things happening", delaying_queue.go maxWait) is left out of the
// clock's Next. The loop queues a key only once its time has come, and
// it keeps a timer for the next one, which Next does count: a heartbeat
// tick finds nothing the timer would not, so an advance need not stop
// for it every 10 s of a day.
type heartbeatless struct{ *scenarioclock.Clock }

func (c heartbeatless) NewTicker(d time.Duration) clock.Ticker {
	t := c.Clock.NewTicker(d)
	c.Exclude(t)
	return t
}

func (l *clientGoCtl) handler() eventHandler                { return l.inner }
func (l *clientGoCtl) ready() int                           { return l.c.Queue().Len() }
func (l *clientGoCtl) process(ctx context.Context)          { l.c.ProcessNextWorkItem(ctx) }
func (l *clientGoCtl) numRequeues(key string) int           { return l.c.Queue().NumRequeues(key) }
func (l *clientGoCtl) shutdown()                            { l.shut = true; l.c.ShutDown() }
func (l *clientGoCtl) lookup(key string) (any, bool, error) { return l.inf.GetIndexer().GetByKey(key) }

// flush waits until the delaying queue's loop has taken in everything
// handed to it and every key whose time has come: client-go moves them
// on its own goroutine.
func (l *clientGoCtl) flush() (time.Duration, bool, error) {
	if l.shut {
		return 0, false, nil
	}
	// A loop found parked stays so until the clock moves or a key is
	// handed to it: a round of a large step does neither, and a stack
	// dump costs what the process's goroutines cost.
	now := loopMoment{l.afters.Load(), l.clock.Now()}
	if l.parkedAt != nil && *l.parkedAt == now {
		return 0, false, nil
	}
	deadline := time.Now().Add(l.timeout)
	for {
		parked, found := l.parked()
		switch {
		case parked:
			l.parkedAt = &now
			return 0, false, nil
		case time.Now().After(deadline) && !found:
			return 0, false, fmt.Errorf("client-go's workqueue: no goroutine created in goroutine %s runs its delaying loop "+
				"(waitingLoop) in %v of stack dumps; has the runtime's stack dump format changed?", l.creator, l.timeout)
		case time.Now().After(deadline):
			return 0, false, fmt.Errorf("client-go's workqueue: its delaying loop did not settle within %v", l.timeout)
		}
		time.Sleep(time.Millisecond)
	}
}

// parked reports whether the delaying queue's loop waits in its select
// with nothing ready: the runtime makes a goroutine runnable in the same
// step as a send to it, so a parked loop has taken in every key handed
// over and every timer that fired (apistorage.Quiescent's method).
// found is false if no goroutine in the dump runs the loop. A dump can
// miss it for a moment: a goroutine caught running on another thread is
// printed as its header and its "created by" line only ("stack
// unavailable"), and FuzzRunner met one such dump (seed 203); flush
// looks again until its timeout.
func (l *clientGoCtl) parked() (parked, found bool) {
	creator := "in goroutine " + l.creator + "\n"
	for _, g := range goroutines.All() {
		if strings.Contains(g, "waitingLoop") && strings.Contains(g+"\n", creator) {
			return goroutines.State(g) == "select", true
		}
	}
	return false, false
}
