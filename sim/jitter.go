package sim

import (
	"sync"
	"time"

	"github.com/cachelab/cachelab/reflector"
)

// backoffJitter gives client-go's re-watch backoffs cachelab's jitter.
//
// After a 429 or a refused connection both reflectors wait before they
// watch again, on the scenario's clock, a delay from the same backoff
// sequence (F6: 0.8 s, 1.6 s, ... each jittered into [d, 2d)). cachelab
// draws its jitter from the run's seed; client-go draws it from
// math/rand's process-wide source, which nobody can seed. A scenario that
// moves the clock to a point between the two draws (advance 1s after a
// 429: cachelab's 1.578 s, client-go's 0.9 s in one run and 1.2 s in the
// next) would see client-go watch again and cachelab not, in some runs
// only (fuzz seed 1).
//
// client-go waits for those backoffs with its reflector's clock.After
// (reflector.go: watch, watchList), which is the simulator's (stopClock).
// So the n-th re-watch backoff client-go asks the clock for is given the
// n-th one cachelab drew, when both fall in the same window [d, 2d) of
// the sequence: client-go then waits what its own source could have
// drawn. Otherwise (the two sequences went different ways, which the
// comparison reports) client-go waits its own draw.
type backoffJitter struct {
	mu       sync.Mutex
	cachelab []time.Duration // cachelab's re-watch backoffs, in order
	taken    int             // how many client-go has asked for
	grew     chan struct{}   // closed when cachelab draws one more
}

func newBackoffJitter() *backoffJitter { return &backoffJitter{grew: make(chan struct{})} }

// drawn records cachelab's next re-watch backoff.
func (j *backoffJitter) drawn(d time.Duration) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.cachelab = append(j.cachelab, d)
	close(j.grew)
	j.grew = make(chan struct{})
}

// pairWait bounds how long client-go's backoff waits for cachelab's
// matching draw: both reflectors hit the same failure in the same step,
// within moments of each other; a side that never backs off has taken
// another path, which the comparison reports.
const pairWait = 2 * time.Second

// forClientGo is the delay client-go's next re-watch backoff waits: d,
// its own draw, or cachelab's matching one.
func (j *backoffJitter) forClientGo(d time.Duration, stopped <-chan struct{}) time.Duration {
	j.mu.Lock()
	n := j.taken
	j.taken++
	j.mu.Unlock()
	timeout := time.NewTimer(pairWait)
	defer timeout.Stop()
	for {
		j.mu.Lock()
		if n < len(j.cachelab) {
			theirs := j.cachelab[n]
			j.mu.Unlock()
			if reflector.SameStep(d, theirs) {
				return theirs
			}
			return d
		}
		grew := j.grew
		j.mu.Unlock()
		select {
		case <-grew:
		case <-stopped:
			return d
		case <-timeout.C:
			return d
		}
	}
}
