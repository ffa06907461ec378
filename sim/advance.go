package sim

import (
	"fmt"
	"time"

	"github.com/cachelab/cachelab/sim/trace"
)

// Scenario time: advance moves the scenario's clock, and everything that
// waits on it (resyncs, watch deadlines, backoffs, a controller's delayed
// keys, kube-apiserver's watch cache) acts at the moment it is due.

func (r *runner) advance(d time.Duration) error {
	// The watch cache does its own work on its clock: about every second
	// it sends bookmarks to the watches that are due one (each minute,
	// and just before a watch's deadline). One jump of the clock would
	// fire that timer once, and race the watches' deadlines; so in the
	// watch-cache world, while informers run, time passes a second at a
	// time, as it does for a real kube-apiserver, and everything settles
	// after each second. The seconds at which nothing is due (quiet) are
	// passed in one move: a day is a few thousand moments, not 86,400.
	stepwise := r.where.clocked() && len(r.livePairs()) > 0
	step := d
	if stepwise {
		step = time.Second
	}
	for left := d; left > 0; {
		if err := r.waitResyncArmed(); err != nil {
			return err
		}
		// Both sides of an informer wait until cachelab's backoff ends.
		until := map[*side]time.Time{}
		for _, s := range r.sides {
			if s.impl == trace.Cachelab {
				until[s], until[s.peer] = s.conn.ParkedUntil(), s.conn.ParkedUntil()
			}
		}
		chunk := min(step, left)
		// Time stops where a controller's delayed key is due, and the
		// controllers reconcile then (controllers.go).
		due, waiting := r.ctlDue()
		keyDue := waiting && due <= chunk
		if keyDue {
			chunk = due
		}
		quiet := time.Duration(0)
		if stepwise && !keyDue && !r.opts.secondBySecond {
			quiet = r.quiet(left, due, waiting)
			if quiet > 0 {
				chunk = quiet
			}
		}
		r.clock.Step(chunk)
		r.moves++
		left -= chunk
		for _, s := range r.sides {
			// A reflector waiting on the clock moves on. Within an
			// advance only cachelab's backoff is known: client-go's,
			// drawn from the same range by an unseeded source, may end
			// a second later, and its next request unparks it.
			if s.impl == trace.Cachelab || left <= 0 {
				s.conn.Unpark(until[s])
			}
		}
		switch {
		case keyDue && left > 0:
			if err := r.settle(); err != nil {
				return err
			}
			if err := r.reconcileAll(); err != nil {
				return err
			}
		case left > 0 && stepwise && (chunk == step || quiet > 0):
			if err := r.settleSecond(); err != nil {
				return err
			}
		}
	}
	r.noteLever(trace.LayerSim, trace.LeverClock, fmt.Sprintf("clock +%v (now %s)", d, r.clock.Now().Sub(epoch)))
	return nil
}

// quiet is how long, in whole seconds from now (or all of left), time can
// pass in one move of the clock in the watch-cache world with nothing
// happening on the way: nothing is due before its end but the watch
// cache's bookmark timer, at whose ticks no watch is due a bookmark, and
// the compactor's, which has nothing to compact (apistorage's NextWork).
// Second by second, the same seconds would pass with nothing to show; the
// one tick of the bookmark timer at the end of the move hands nothing on
// either, and leaves the timer's next tick a second later, where it would
// have been. A controller's delayed key due in keyDue (if waiting) counts
// too: cachelab's queue waits on no timer (controller.Options.Manual).
// 0 means the next second has something due.
func (r *runner) quiet(left, keyDue time.Duration, waiting bool) time.Duration {
	now := r.clock.Now()
	next, ok := r.clock.Next()
	if waiting && (!ok || now.Add(keyDue).Before(next)) {
		next, ok = now.Add(keyDue), true
	}
	if at, due := r.where.nextWork(); due && (!ok || at.Before(next)) {
		next, ok = at, true
	}
	if !ok || next.Sub(now) > left {
		return left
	}
	// The last whole second of the grid before next: now+k < next <= now+k+1.
	k := (next.Sub(now) + time.Second - 1) / time.Second * time.Second
	return max(k-time.Second, 0)
}

// resyncPeriodOf is how often the reflectors of the informer whose cachelab side is s resync (0: never): the queue
// world's period, or cachelab's informer's check period, which client-go's
// derives by the same rule (P7).
func (r *runner) resyncPeriodOf(s *side) time.Duration {
	if ci, ok := s.inf.(cachelabInformer); ok && !s.cfg.queue {
		return ci.inf.ResyncCheckPeriod()
	}
	if s.cfg == nil {
		return 0
	}
	return s.cfg.resync
}

// waitResyncArmed waits until each reflector that watches has armed its
// resync timer. Both stacks make that timer on a goroutine of the
// reflector's own once its watch loop starts; a clock moved before it is
// made would not fire it, and on a busy machine one side would resync and
// the other not. Settling now waits for a side's goroutines to park, which
// covers this too; the check stays as a cheap, explicit guard.
func (r *runner) waitResyncArmed() error {
	deadline := time.Now().Add(r.opts.SettleTimeout)
	for _, p := range r.livePairs() {
		if r.resyncPeriodOf(p[0]) <= 0 {
			continue
		}
		for _, s := range p {
			for s.conn.State().Open > 0 && !s.ticks.armed() {
				if time.Now().After(deadline) {
					return fmt.Errorf("%s's reflector watches but has not armed its resync timer after %v", s.impl, r.opts.SettleTimeout)
				}
				select {
				case <-time.After(time.Millisecond):
				case <-r.ctx.Done():
					return r.ctx.Err()
				}
			}
		}
	}
	return nil
}
