package reflector

import (
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// The reflector's backoff (F6), as client-go sets it up: delays double from
// 0.8 s to a 30 s cap, each stretched by a random factor in [1, 2), and the
// sequence starts over at the first delay drawn more than two minutes after
// it last started over.
const (
	backoffInitial = 800 * time.Millisecond
	backoffCap     = 30 * time.Second
	backoffReset   = 2 * time.Minute
)

// Backoff hands out the delays a reflector waits between relists, and
// before a re-watch after 429 Too Many Requests or a refused connection.
//
//	draw:   1    2    3    4     5     6     7   8 ...
//	base:  0.8  1.6  3.2  6.4  12.8  25.6   30  30 ...   (seconds)
//	wait:  base * (1 + u), u uniform in [0, 1)
//
// The sequence restarts when a draw comes more than 2 min after the last
// restart, even if failures never stopped: it is a reset on a timer, not
// on success. It mirrors the wait.Backoff that client-go's NewReflector
// builds, with backoffManager's DelayWithReset.
type Backoff struct {
	clock   clock.PassiveClock
	uniform func() float64

	mu        sync.Mutex
	next      time.Duration // the base of the next draw
	lastReset time.Time
}

// NewBackoff returns a Backoff at its first step. uniform draws the jitter
// from [0, 1).
func NewBackoff(c clock.PassiveClock, uniform func() float64) *Backoff {
	return &Backoff{clock: c, uniform: uniform, next: backoffInitial, lastReset: c.Now()}
}

// SameStep reports whether delays a and b can be draws of one step of the
// sequence: both in [base, 2·base) for one of its bases. (The capped
// step's window, [30 s, 60 s), overlaps the one before it.)
func SameStep(a, b time.Duration) bool {
	for base := backoffInitial; ; base = min(2*base, backoffCap) {
		if a >= base && a < 2*base && b >= base && b < 2*base {
			return true
		}
		if base == backoffCap {
			return false
		}
	}
}

// Next returns the next delay to wait.
func (b *Backoff) Next() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	if now := b.clock.Now(); now.Sub(b.lastReset) > backoffReset {
		b.next, b.lastReset = backoffInitial, now
	}
	base := b.next
	b.next = min(2*base, backoffCap)
	return base + time.Duration(b.uniform()*float64(base))
}
