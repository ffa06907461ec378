package sim

import (
	"sync"
	"time"

	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
)

// tickClock is the fake clock as cachelab's side sees it. It tells the
// runner whether a timer has fired and not been handled yet, so that
// settling after "advance" waits for the resync tick it caused.
//
// The only timer cachelab's stack makes on its clock is the reflector's
// resync timer, and its loop makes the next one only after the tick is
// handled (reflector/resync.go). So a timer that is due counts as pending
// until the next NewTimer, or until it is stopped.
type tickClock struct {
	*clocktesting.FakeClock

	mu   sync.Mutex
	live map[*tickTimer]time.Time // deadline of each timer not yet handled or stopped
}

func newTickClock(c *clocktesting.FakeClock) *tickClock {
	return &tickClock{FakeClock: c, live: map[*tickTimer]time.Time{}}
}

// NewTimer makes a timer, and counts every due one as handled.
func (c *tickClock) NewTimer(d time.Duration) clock.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.Now()
	for t, deadline := range c.live {
		if !deadline.After(now) {
			delete(c.live, t)
		}
	}
	t := &tickTimer{Timer: c.FakeClock.NewTimer(d), c: c}
	c.live[t] = now.Add(d)
	return t
}

// pending reports whether a timer is due and not yet handled.
func (c *tickClock) pending() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.Now()
	for _, deadline := range c.live {
		if !deadline.After(now) {
			return true
		}
	}
	return false
}

type tickTimer struct {
	clock.Timer
	c *tickClock
}

func (t *tickTimer) Stop() bool {
	t.c.mu.Lock()
	delete(t.c.live, t)
	t.c.mu.Unlock()
	return t.Timer.Stop()
}
