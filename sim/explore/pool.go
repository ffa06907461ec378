package explore

import (
	"context"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// pool decides when the next placement may start: while fewer than
// computing runs compute, and fewer than most run in all. A run that
// waits real time (sim.Options.OnRealWait: a relist backoff, which
// client-go waits on the real clock) computes nothing until its wait
// ends, so it does not count meanwhile, and another run starts in its
// place. With computing = most it is a plain limit of most at once.
//
//	start ──▶ computing ──waits(d)──▶ waiting, until d has passed ──▶ computing ──▶ end
//
// A wait's end frees nothing, so it needs no timer: whether a run is
// still waiting is read from the clock whenever the pool counts.
type pool struct {
	computing, most int
	clock           clock.PassiveClock

	mu    sync.Mutex
	freed *sync.Cond            // a run ended, began to wait, or ctx ended
	runs  map[*poolRun]struct{} // the runs started and not ended
}

// poolRun is one placement's run in a pool.
type poolRun struct {
	until time.Time // when its wait of real time ends (zero: it has not waited)
}

func newPool(computing, most int, c clock.PassiveClock) *pool {
	p := &pool{computing: max(computing, 1), most: max(most, computing, 1), clock: c, runs: map[*poolRun]struct{}{}}
	p.freed = sync.NewCond(&p.mu)
	return p
}

// start waits until a run may start and returns it, or returns nil once
// ctx has ended.
func (p *pool) start(ctx context.Context) *poolRun {
	stop := context.AfterFunc(ctx, func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.freed.Broadcast()
	})
	defer stop()
	p.mu.Lock()
	defer p.mu.Unlock()
	for ctx.Err() == nil && (len(p.runs) >= p.most || p.computingLocked() >= p.computing) {
		p.freed.Wait()
	}
	if ctx.Err() != nil {
		return nil
	}
	r := &poolRun{}
	p.runs[r] = struct{}{}
	return r
}

// waits says that r has begun to wait d of real time.
func (p *pool) waits(r *poolRun, d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if until := p.clock.Now().Add(d); until.After(r.until) {
		r.until = until
	}
	p.freed.Broadcast()
}

// end says that r has ended.
func (p *pool) end(r *poolRun) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.runs, r)
	p.freed.Broadcast()
}

// computingLocked is how many runs are not waiting real time.
func (p *pool) computingLocked() int {
	now, n := p.clock.Now(), 0
	for r := range p.runs {
		if !now.Before(r.until) {
			n++
		}
	}
	return n
}
