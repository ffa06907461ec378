// Package scenarioclock is a simulation's clock: a fake clock, moved only
// by its owner, that can also say when the next of its timers is due.
//
// k8s.io/utils' fake clock (clock/testing.FakeClock) fires every timer,
// ticker and After whose time has come when its owner steps it, and that
// is all a test needs. A simulator that moves a scenario through a day of
// time needs one thing more: to move straight to the next moment anything
// happens, rather than second by second through a day of moments at which
// nothing does. Next says when that is.
//
//	Step(d) ──▶ now += d ──▶ every waiter due by now fires, in the order
//	                          they were made (a ticker once, however many
//	                          of its periods passed)
//	Next()  ──▶ the earliest time a waiter not excluded is due
//
// Some timers fire often and rarely matter: kube-apiserver's watch cache
// ticks every second and sends a watch a bookmark only when one is due.
// Their owner can Exclude them from Next and say itself when their firing
// matters.
//
// Everything else behaves as FakeClock does (clock_test.go holds the two
// side by side), but for one thing: a stopped ticker stops, as a real
// one does, where FakeClock's keeps ticking into its channel.
package scenarioclock

import (
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// Clock is a fake clock that knows when its next timer is due.
type Clock struct {
	mu      sync.RWMutex
	now     time.Time
	waiters []*waiter // in the order they were made (or reset)
}

// A waiter is one After, timer or ticker not yet fired (or, a ticker, not
// yet stopped).
type waiter struct {
	at       time.Time
	period   time.Duration // a ticker's; 0 for one that fires once
	ch       chan time.Time
	callback func() // AfterFunc's
	excluded bool   // left out of Next
}

var _ clock.WithTicker = (*Clock)(nil)

// New returns a clock reading t.
func New(t time.Time) *Clock { return &Clock{now: t} }

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.now
}

// Since is Now().Sub(t).
func (c *Clock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// Step moves the clock on by d and fires what is due.
func (c *Clock) Step(d time.Duration) {
	c.mu.Lock()
	c.setLocked(c.now.Add(d))
}

// SetTime sets the clock to t and fires what is due.
func (c *Clock) SetTime(t time.Time) {
	c.mu.Lock()
	c.setLocked(t)
}

// Sleep, on a fake clock, is Step: nobody else moves it.
func (c *Clock) Sleep(d time.Duration) { c.Step(d) }

// setLocked sets the time with c.mu held, fires every waiter due (a
// send that would block is dropped: each channel holds one time), and
// unlocks before it calls AfterFunc's callbacks, in order.
func (c *Clock) setLocked(t time.Time) {
	c.now = t
	var callbacks []func()
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if w.at.After(t) {
			kept = append(kept, w)
			continue
		}
		select {
		case w.ch <- t:
		default:
		}
		if w.callback != nil {
			callbacks = append(callbacks, w.callback)
		}
		if w.period > 0 {
			for !w.at.After(t) {
				w.at = w.at.Add(w.period)
			}
			kept = append(kept, w)
		}
	}
	clear(c.waiters[len(kept):])
	c.waiters = kept
	c.mu.Unlock()
	for _, f := range callbacks {
		f()
	}
}

// add makes a waiter due after d (a ticker's every d, if period).
func (c *Clock) add(d time.Duration, period bool, callback func()) *waiter {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := &waiter{at: c.now.Add(d), ch: make(chan time.Time, 1), callback: callback}
	if period {
		w.period = d
	}
	c.waiters = append(c.waiters, w)
	return w
}

// After is time.After on this clock.
func (c *Clock) After(d time.Duration) <-chan time.Time { return c.add(d, false, nil).ch }

// NewTimer is time.NewTimer on this clock.
func (c *Clock) NewTimer(d time.Duration) clock.Timer { return &timer{c: c, w: c.add(d, false, nil)} }

// AfterFunc is time.AfterFunc on this clock: f runs on the goroutine
// that moves the clock past d.
func (c *Clock) AfterFunc(d time.Duration, f func()) clock.Timer {
	return &timer{c: c, w: c.add(d, false, f)}
}

// NewTicker is time.NewTicker on this clock.
func (c *Clock) NewTicker(d time.Duration) clock.Ticker {
	if d <= 0 {
		panic("scenarioclock: non-positive interval for NewTicker")
	}
	return &ticker{c: c, w: c.add(d, true, nil)}
}

// Tick is time.Tick on this clock (nil for d <= 0).
func (c *Clock) Tick(d time.Duration) <-chan time.Time {
	if d <= 0 {
		return nil
	}
	return c.add(d, true, nil).ch
}

// HasWaiters reports whether anything waits on the clock.
func (c *Clock) HasWaiters() bool { return c.Waiters() > 0 }

// Waiters is how many Afters, timers and tickers wait on the clock.
func (c *Clock) Waiters() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.waiters)
}

// Next is the earliest time a waiter not excluded is due (it may be now
// or earlier, for a timer reset to fire at once); ok is false when none
// waits.
func (c *Clock) Next() (at time.Time, ok bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, w := range c.waiters {
		if !w.excluded && (!ok || w.at.Before(at)) {
			at, ok = w.at, true
		}
	}
	return at, ok
}

// Exclude leaves a timer or ticker this clock made out of Next, for good
// (through its resets too): its owner says when its firing matters.
func (c *Clock) Exclude(t interface{ C() <-chan time.Time }) {
	var w *waiter
	switch t := t.(type) {
	case *timer:
		w = t.w
	case *ticker:
		w = t.w
	default:
		return // not one of this clock's
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	w.excluded = true
}

// remove takes w off the clock; it reports whether w was waiting.
func (c *Clock) remove(w *waiter) bool {
	for i, x := range c.waiters {
		if x == w {
			c.waiters = append(c.waiters[:i], c.waiters[i+1:]...)
			return true
		}
	}
	return false
}

type timer struct {
	c *Clock
	w *waiter
}

func (t *timer) C() <-chan time.Time { return t.w.ch }

// Stop keeps the timer from firing; it reports whether it was waiting.
func (t *timer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	return t.c.remove(t.w)
}

// Reset makes the timer fire d from now; it reports whether it was
// waiting. A reset timer goes to the end of the clock's order, as
// FakeClock's does once it has fired or stopped.
func (t *timer) Reset(d time.Duration) bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	t.w.at = t.c.now.Add(d)
	for _, x := range t.c.waiters {
		if x == t.w {
			return true
		}
	}
	t.c.waiters = append(t.c.waiters, t.w)
	return false
}

type ticker struct {
	c *Clock
	w *waiter
}

func (t *ticker) C() <-chan time.Time { return t.w.ch }

// Stop stops the ticker: it sends nothing more.
func (t *ticker) Stop() {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	t.c.remove(t.w)
}
