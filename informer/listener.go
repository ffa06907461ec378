package informer

import (
	"sync"
	"sync/atomic"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"
)

// NotificationKind says which handler method a Notification calls.
type NotificationKind string

// The three kinds of notification, one per handler method.
const (
	KindAdd    NotificationKind = "add"
	KindUpdate NotificationKind = "update"
	KindDelete NotificationKind = "delete"
)

// Notification is one pending handler call.
type Notification struct {
	Kind NotificationKind
	// Old is the object of a delete, or the old object of an update.
	Old any
	// New is the object of an add, or the new object of an update.
	New any
	// InInitialList is OnAdd's isInInitialList.
	InInitialList bool
}

// listener delivers notifications to one handler, in order, from its own
// goroutine, through a buffer with no bound: the informer never waits for
// a handler, and a slow handler delays only itself (P10). It is also the
// handler's Registration.
//
//	informer ──add──▶ [ n1 n2 n3 ... ] ──run──▶ handler.OnAdd/OnUpdate/OnDelete
//
// client-go's processorListener does this with two goroutines and a ring
// buffer between two channels; one goroutine and a slice under a condition
// variable say the same thing more plainly.
type listener struct {
	handler ResourceEventHandler
	name    string
	synced  *syncTracker
	trace   func(Event)
	logger  klog.Logger // where a handler's panic is logged (P14)
	// checkerName names its HasSyncedChecker: "<informer's> + event
	// handler <handler's>", as client-go names it.
	checkerName string

	mu       sync.Mutex
	wake     *sync.Cond
	pending  []Notification
	busy     bool // a handler call is in progress
	stopped  bool
	stopCh   chan struct{} // closed by stop
	finished chan struct{} // closed when the handler will not be called again

	// Resync bookkeeping, guarded by the processor's lock (P6, P7).
	requestedResync time.Duration // as the handler asked, after the 1 s floor
	resyncPeriod    time.Duration // as in effect
	nextResync      time.Time
	due             bool // whether sync notifications reach this handler
}

func newListener(h ResourceEventHandler, name string, logger klog.Logger, requested, effective time.Duration, now time.Time, upstream <-chan struct{}, trace func(Event)) *listener {
	l := &listener{
		handler:         h,
		name:            name,
		synced:          newSyncTracker(upstream),
		trace:           trace,
		logger:          logger,
		stopCh:          make(chan struct{}),
		finished:        make(chan struct{}),
		requestedResync: requested,
		resyncPeriod:    effective,
		due:             true, // every listener starts due (P6)
	}
	l.wake = sync.NewCond(&l.mu)
	l.nextResync = now.Add(effective)
	return l
}

// HasSynced reports whether the informer has synced and this handler has
// returned from every OnAdd of the initial list (P9).
func (l *listener) HasSynced() bool { return l.synced.hasSynced() }

// Synced is closed when HasSynced turns true.
func (l *listener) Synced() <-chan struct{} { return l.synced.done }

// Finished is closed once the handler will not be called again: after
// RemoveEventHandler or the informer's stop, when the call in progress
// (if any) has returned.
func (l *listener) Finished() <-chan struct{} { return l.finished }

// add queues n. It never blocks.
func (l *listener) add(n Notification) {
	if n.Kind == KindAdd && n.InInitialList {
		l.synced.start()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return
	}
	l.pending = append(l.pending, n)
	l.wake.Signal()
}

// run delivers notifications until stop. It is the listener's goroutine.
//
// A handler that panics is handled as client-go handles it (P14):
// utilruntime.HandleCrashWithLogger logs the panic and runs
// utilruntime.PanicHandlers, then crashes the process unless
// utilruntime.ReallyCrash is false. If it is, the notification is lost
// (an initial-list OnAdd that panicked is never counted as handled, so the
// registration never reports synced) and the next one is delivered a
// second later, of real time, as client-go sleeps.
func (l *listener) run() {
	defer close(l.finished)
	crashed := false
	for {
		n, ok := l.next()
		if !ok {
			return
		}
		if crashed {
			time.Sleep(time.Second)
		}
		crashed = l.deliver(n)
		l.mu.Lock()
		l.busy = false
		l.mu.Unlock()
	}
}

func (l *listener) next() (Notification, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for len(l.pending) == 0 && !l.stopped {
		l.wake.Wait()
	}
	if l.stopped {
		return Notification{}, false
	}
	n := l.pending[0]
	l.pending[0] = Notification{}
	l.pending = l.pending[1:]
	l.busy = true
	return n, true
}

// deliver calls the handler; crashed reports that it panicked (and
// utilruntime.ReallyCrash is false, or the process would be gone).
func (l *listener) deliver(n Notification) (crashed bool) {
	crashed = true
	defer utilruntime.HandleCrashWithLogger(l.logger)
	if l.trace != nil {
		l.trace(Event{Step: StepDeliver, Handler: l.name, Notification: n})
	}
	switch n.Kind {
	case KindAdd:
		l.handler.OnAdd(n.New, n.InInitialList)
		if n.InInitialList {
			l.synced.finished()
		}
	case KindUpdate:
		l.handler.OnUpdate(n.Old, n.New)
	case KindDelete:
		l.handler.OnDelete(n.Old)
	}
	return false
}

// watchUpstream tells the sync tracker when the informer has synced.
func (l *listener) watchUpstream() {
	select {
	case <-l.synced.upstream:
		l.synced.upstreamSynced()
	case <-l.stopCh:
	}
}

// stop drops what was not delivered and ends run after the call in
// progress (P10).
func (l *listener) stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return
	}
	l.stopped = true
	l.pending = nil
	close(l.stopCh)
	l.wake.Signal()
}

// pendingLen is how many notifications wait for the handler.
func (l *listener) pendingLen() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.pending)
}

// unfinished is how many notifications the handler has not returned
// from: the buffered ones and the one in progress.
func (l *listener) unfinished() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(l.pending)
	if l.busy {
		n++
	}
	return n
}

// shouldResync reports whether the listener's resync is due at now.
func (l *listener) shouldResync(now time.Time) bool {
	return l.resyncPeriod != 0 && !now.Before(l.nextResync)
}

// syncTracker is one registration's HasSynced (P9): synced once the
// informer has synced (upstream) and every initial-list OnAdd queued for
// this handler has returned. It mirrors client-go's
// synctrack.SingleFileTracker.
type syncTracker struct {
	upstream   <-chan struct{}
	inFlight   atomic.Int64 // initial-list adds queued and not yet returned
	upstreamOK atomic.Bool
	once       sync.Once
	done       chan struct{}
}

func newSyncTracker(upstream <-chan struct{}) *syncTracker {
	return &syncTracker{upstream: upstream, done: make(chan struct{})}
}

func (t *syncTracker) start() { t.inFlight.Add(1) }

func (t *syncTracker) finished() {
	n := t.inFlight.Add(-1)
	if n < 0 {
		panic("informer: sync tracker counted more finished initial adds than started ones")
	}
	if n == 0 && t.upstreamOK.Load() {
		t.once.Do(func() { close(t.done) })
	}
}

func (t *syncTracker) upstreamSynced() {
	t.upstreamOK.Store(true)
	if t.inFlight.Load() == 0 {
		t.once.Do(func() { close(t.done) })
	}
}

// settling reports bookkeeping still to come: the informer has synced,
// and this registration's HasSynced is about to turn true (it has not
// heard yet, or it has heard and every initial add has returned, and
// the closing of done is a moment away). A registration whose initial
// add panicked never syncs (P14), and is not settling.
func (t *syncTracker) settling() bool {
	if !isClosed(t.upstream) || t.hasSynced() {
		return false
	}
	return !t.upstreamOK.Load() || t.inFlight.Load() == 0
}

func (t *syncTracker) hasSynced() bool {
	select {
	case <-t.done:
		return true
	default:
		return false
	}
}
