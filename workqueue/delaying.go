package workqueue

import (
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// Options configure a delaying or rate-limiting queue.
type Options struct {
	// Clock tells the time and makes the timers. Nil means the real clock;
	// tests pass a k8s.io/utils/clock/testing.FakeClock.
	Clock clock.Clock
	// Manual starts no goroutine: nothing waiting is added until the
	// caller calls Flush, typically after moving a fake clock. client-go
	// has no such mode; a simulator that steps one thing at a time needs
	// it.
	Manual bool
}

// DelayingQueue is a Queue whose AddAfter adds an item once a delay has
// passed on its clock. Until then the item waits outside the queue: Len
// does not count it and Get cannot return it.
//
//	AddAfter(x, 5s) ──► waiting (heap on readyAt) ──Flush at t+5s──► Queue.Add(x)
//
// A goroutine calls Flush whenever the earliest waiting item is due, or
// when AddAfter makes an item the earliest; with Options.Manual the caller
// does.
//
// client-go: util/workqueue/delaying_queue.go delayingType. There,
// AddAfter hands the item over a channel to the loop, which owns the
// heap; here AddAfter puts it into the heap itself, under a lock, and
// nudges the loop. The loop keeps no 10-second heartbeat either: it only
// ever woke the loop to do what the timer already does.
type DelayingQueue[T comparable] struct {
	*Queue[T]
	clock clock.Clock

	mu      sync.Mutex // guards waiting
	waiting waiting[T]

	wake     chan struct{} // capacity 1: "the earliest item may have changed"
	stop     chan struct{} // closed to end the loop
	loopDone chan struct{} // closed when the loop has ended
	stopLoop sync.Once
	shutOnce sync.Once
}

// NewDelaying returns an empty delaying queue and, unless opts.Manual,
// starts its loop. ShutDown ends the loop.
func NewDelaying[T comparable](opts Options) *DelayingQueue[T] {
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	q := &DelayingQueue[T]{
		Queue:    New[T](),
		clock:    opts.Clock,
		wake:     make(chan struct{}, 1),
		stop:     make(chan struct{}),
		loopDone: make(chan struct{}),
	}
	if opts.Manual {
		close(q.loopDone)
	} else {
		go q.loop()
	}
	return q
}

// AddAfter adds item once d has passed (W7). A d of zero or less adds it
// at once, as Add; a queue shutting down ignores it.
func (q *DelayingQueue[T]) AddAfter(item T, d time.Duration) {
	if q.ShuttingDown() {
		return
	}
	if d <= 0 {
		q.Add(item)
		return
	}
	readyAt := q.clock.Now().Add(d)
	q.mu.Lock()
	earliest := q.waiting.insert(item, readyAt)
	q.mu.Unlock()
	if !earliest {
		return // the loop's timer is for an earlier item: it will see this one then
	}
	select {
	case q.wake <- struct{}{}:
	default: // a nudge is already pending
	}
}

// Flush adds to the queue, earliest first, every waiting item that is due
// at the clock's present time (W8), and reports how long until the next
// one is due. A queue shutting down adds nothing and reports nothing
// waiting: what still waits is dropped (W10).
func (q *DelayingQueue[T]) Flush() (next time.Duration, waiting bool) {
	if q.ShuttingDown() {
		return 0, false
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.clock.Now()
	q.waiting.popReady(now, q.Add)
	readyAt, ok := q.waiting.next()
	return readyAt.Sub(now), ok
}

// Waiting is the number of items AddAfter holds back.
func (q *DelayingQueue[T]) Waiting() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.waiting.len()
}

// loop is the goroutine around Flush: flush, then sleep until the next
// item is due, a nudge from AddAfter, or the end.
func (q *DelayingQueue[T]) loop() {
	defer close(q.loopDone)
	for {
		next, ok := q.Flush()
		var due <-chan time.Time
		var timer clock.Timer
		if ok {
			timer = q.clock.NewTimer(next)
			due = timer.C()
		}
		select {
		case <-q.stop:
		case <-due:
		case <-q.wake:
		}
		if timer != nil {
			timer.Stop()
		}
		select {
		case <-q.stop:
			return
		default:
		}
	}
}

// ShutDown shuts the queue down (Queue.ShutDown) and ends the loop, the
// first time it is called; later calls do nothing. As in client-go, that
// includes not releasing a ShutDownWithDrain begun after the first
// ShutDown (W11).
func (q *DelayingQueue[T]) ShutDown() {
	q.shutOnce.Do(func() {
		q.Queue.ShutDown()
		q.endLoop()
	})
}

// ShutDownWithDrain shuts the queue down, ends the loop, and waits until
// no worker holds an item (Queue.ShutDownWithDrain). client-go's leaves
// its loop running until the loop next wakes; nothing it could do then
// would reach the queue, so ending it now changes nothing a caller sees.
func (q *DelayingQueue[T]) ShutDownWithDrain() {
	q.beginShutDown(true)
	q.endLoop()
	q.waitDrained()
}

// endLoop stops the loop and waits for it to return.
func (q *DelayingQueue[T]) endLoop() {
	q.stopLoop.Do(func() { close(q.stop) })
	<-q.loopDone
}
