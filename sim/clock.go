package sim

import (
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/cachelab/cachelab/internal/scenarioclock"
)

// tickClock is the fake clock as a side sees it. It tells the runner
// whether a timer has fired and not been handled yet, so that settling
// after "advance" waits for the resync tick it caused (cachelab's side),
// and whether a timer is armed, so that "advance" waits for the resync
// timer a reflector makes on a goroutine of its own (both sides).
//
// The only timer either stack makes on this clock is the reflector's
// resync timer (client-go: reflector.go resyncChan), and its loop makes
// the next one only after the tick is handled (reflector/resync.go;
// client-go stops the fired one first). So a timer that is due counts as
// pending until the next NewTimer, or until it is stopped.
type tickClock struct {
	*scenarioclock.Clock

	late      time.Duration // Options.lateTimers
	lateReads time.Duration // Options.lateReads

	mu      sync.Mutex
	live    map[*tickTimer]time.Time // deadline of each timer not yet handled or stopped
	handled int                      // ticks handled so far (a due timer made way for the next, or stopped)
}

func newTickClock(c *scenarioclock.Clock, late, lateReads time.Duration) *tickClock {
	return &tickClock{Clock: c, late: late, lateReads: lateReads, live: map[*tickTimer]time.Time{}}
}

// Now is the scenario's time. With Options.lateReads it is read late, as
// by a goroutine that a busy machine runs late just before it reads.
func (c *tickClock) Now() time.Time {
	if c.lateReads > 0 {
		time.Sleep(c.lateReads)
	}
	return c.Clock.Now()
}

// Since is Now().Sub(t), read as Now is.
func (c *tickClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// NewTimer makes a timer, and counts every due one as handled.
func (c *tickClock) NewTimer(d time.Duration) clock.Timer {
	time.Sleep(c.late)
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.Now()
	for t, deadline := range c.live {
		if !deadline.After(now) {
			delete(c.live, t)
			c.handled++
		}
	}
	t := &tickTimer{Timer: c.Clock.NewTimer(d), c: c}
	c.live[t] = now.Add(d)
	if c.late > 0 {
		t.relayLate()
	}
	return t
}

// pending reports whether a timer is due and not yet handled.
func (c *tickClock) pending() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.Clock.Now() // the runner's read, never late
	for _, deadline := range c.live {
		if !deadline.After(now) {
			return true
		}
	}
	return false
}

// ticksHandled is how many ticks the side's reflector has handled.
func (c *tickClock) ticksHandled() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.handled
}

// armed reports whether a timer is set to fire later: the reflector's
// resync timer, once its loop has made it.
func (c *tickClock) armed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.Clock.Now() // the runner's read, never late
	for _, deadline := range c.live {
		if deadline.After(now) {
			return true
		}
	}
	return false
}

type tickTimer struct {
	clock.Timer
	c *tickClock

	// With Options.lateTimers, the tick is handed on late too, as to a
	// reflector's goroutine that a busy machine runs late.
	late    chan time.Time
	stopped chan struct{}
	once    sync.Once
}

// relayLate hands the timer's tick on Options.lateTimers after it fired.
func (t *tickTimer) relayLate() {
	t.late, t.stopped = make(chan time.Time, 1), make(chan struct{})
	go func() {
		select {
		case v := <-t.Timer.C():
			time.Sleep(t.c.late)
			t.late <- v
		case <-t.stopped:
		}
	}()
}

func (t *tickTimer) C() <-chan time.Time {
	if t.late != nil {
		return t.late
	}
	return t.Timer.C()
}

func (t *tickTimer) Stop() bool {
	t.c.mu.Lock()
	if deadline, ok := t.c.live[t]; ok && !deadline.After(t.c.Now()) {
		t.c.handled++
	}
	delete(t.c.live, t)
	t.c.mu.Unlock()
	if t.stopped != nil {
		t.once.Do(func() { close(t.stopped) })
	}
	return t.Timer.Stop()
}

// lateClock is the scenario's clock as the world's components read it
// (the watch cache, kube-apiserver's watch deadlines, the etcd world's
// watch timeouts), with Options.lateReads: each read made late, as by a
// goroutine that a busy machine runs late just before it reads. The
// clock's other methods (Exclude, Next, Step) are its own.
type lateClock struct {
	*scenarioclock.Clock
	late time.Duration
}

func (c lateClock) Now() time.Time {
	time.Sleep(c.late)
	return c.Clock.Now()
}

func (c lateClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// worldClock is the clock the run's world reads: the scenario's, late
// with Options.lateReads.
func (r *runner) worldClock() clock.WithTicker {
	if r.opts.lateReads > 0 {
		return lateClock{r.clock, r.opts.lateReads}
	}
	return r.clock
}

// parkClock is the fake clock as cachelab's side sees it. Its After is
// where cachelab's reflector waits a re-watch backoff (the only wait it
// makes on this clock: reflector.go wait), and the connection is parked
// once the clock has that wait (world.Conn.RewatchBackoff), as
// client-go's is (stopClock). Parked when the reflector traced the
// backoff, a moment before it asks the clock, the side could settle, and
// the next step move the clock, before the wait was set: set after the
// move, it ended a move later, and the re-watch the step waited for
// never came (CI, watch-errors under lateTimers: "waiting for a watch
// to be open").
type parkClock struct {
	*tickClock
	waits func(time.Duration)
}

// After is the fake clock's After, and parks the connection (if waits
// is set).
func (c parkClock) After(d time.Duration) <-chan time.Time {
	time.Sleep(c.late) // Options.lateTimers: a reflector that a busy machine runs late
	fired := c.Clock.After(d)
	if c.waits != nil {
		c.waits(d)
	}
	return fired
}

// stopClock is the fake clock as client-go's side sees it, but for one
// thing: once the side is stopped, a wait made with After ends at once.
// client-go v0.37.2's watch-list, after a retriable error such as 429,
// backs off with <-r.clock.After(delay) and does not watch its stop
// channel meanwhile (reflector.go, watchList); on a real clock Stop waits
// out that backoff, at most a minute. On the scenario's clock, which
// moves only when the scenario says, it would wait for ever and the run
// could not stop. Everything client-go does after such a wait checks its
// stop channel first, so ending it early changes nothing else.
//
// Its After is also where client-go waits its re-watch backoffs: each
// gets cachelab's jitter (backoffJitter).
type stopClock struct {
	*tickClock
	stopped <-chan struct{}
	jitter  *backoffJitter
	// waits is told of each wait a reflector starts on the clock once
	// the clock has it: client-go's reflector asks After only for a
	// re-watch backoff (reflector.go), and its connection is parked from
	// then until the clock reaches its end (world.Conn.RewatchBackoff).
	waits func(time.Duration)
}

// After is the fake clock's After, which also fires when the side stops.
func (c stopClock) After(d time.Duration) <-chan time.Time {
	if c.jitter != nil {
		d = c.jitter.forClientGo(d, c.stopped)
	}
	fired := parkClock{c.tickClock, c.waits}.After(d)
	out := make(chan time.Time, 1)
	go func() {
		select {
		case t := <-fired:
			out <- t
		case <-c.stopped:
			out <- c.Now()
		}
	}()
	return out
}
