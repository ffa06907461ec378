package sim

import (
	"fmt"
	"strconv"
	"time"

	"github.com/google/go-cmp/cmp"
)

// settle waits until both sides have fully processed the step. cachelab
// is settled when its reflector has caught up with etcd (or waits at a
// held connection, or on the fake clock) and its queue and handlers have
// no work left. client-go's queue and listeners cannot be seen from
// outside, so once its reflector has caught up it is given until the
// timeout to reach the same handler call counts, HasSynced values and
// indexer as cachelab; if it does not, that is a divergence, reported with
// what each side had.
func (r *runner) settle() error {
	if r.cfg == nil {
		return nil
	}
	rev, err := r.revision()
	if err != nil {
		return err
	}
	cl, cg := r.sides[0], r.sides[1]
	if err := r.settleSide(cl, rev, nil); err != nil {
		return err
	}
	want := cl.snapshot()
	err = r.settleSide(cg, rev, &want)
	r.unseenWrite = false
	return err
}

func (r *runner) settleSide(s *side, rev int64, want *snapshot) error {
	deadline := time.Now().Add(r.opts.SettleTimeout)
	var asked time.Time
	for {
		c := s.probe.state()
		// Work still on its way to the store. cachelab reports when a
		// Replace is done and when each event is applied; client-go cannot,
		// and waiting for cachelab's state below covers it.
		busy := c.askedBookmark || c.relaying
		if want == nil {
			busy = busy || c.listing || c.unapplied
		}
		caughtUp := c.parked || c.waiting > 0 || (c.open > 0 && !busy && atLeast(s.inf.lastSyncRV(), rev))
		if caughtUp {
			if want == nil {
				if r.idle(s) {
					return nil
				}
			} else if got := s.snapshot(); r.settledLike(got, *want) {
				return nil
			}
		} else if r.unseenWrite && c.open > 0 && time.Since(asked) > time.Second {
			// Writes the informer's selectors filter out never reach it;
			// a progress notification tells it etcd's revision.
			_ = s.probe.lw.RequestProgress(r.ctx)
			asked = time.Now()
		}
		if time.Now().After(deadline) {
			return r.settleTimeout(s, rev, want, c.open, c.waiting)
		}
		select {
		case <-s.probe.progress:
		case <-time.After(2 * time.Millisecond):
		case <-r.ctx.Done():
			return r.ctx.Err()
		}
	}
}

// idle reports whether cachelab has no work in flight, ignoring handlers
// the scenario holds (slow ones).
func (r *runner) idle(s *side) bool {
	if r.cfg.queue {
		return true // the simulator pops the queue itself, after settling
	}
	b, _ := s.inf.backlog()
	if b.Queued > 0 || b.SyncPending > 0 || s.ticks.pending() {
		return false
	}
	for _, h := range s.handlers {
		if !h.removed && !h.slow() && b.Handlers[h.name] > 0 {
			return false
		}
	}
	return true
}

// settledLike reports whether client-go has reached cachelab's settled
// state: what it must have produced before the two are compared.
func (r *runner) settledLike(got, want snapshot) bool {
	got.StoreRV, want.StoreRV = comparableStoreRV(got, r.classic), comparableStoreRV(want, r.classic)
	return cmp.Equal(got, want)
}

func (r *runner) settleTimeout(s *side, rev int64, want *snapshot, open, waiting int) error {
	if want == nil {
		b, _ := s.inf.backlog()
		return fmt.Errorf("cachelab did not settle within %v: last synced rv %q (etcd at %d), %d open watches, %d held calls, backlog %+v; the step's trace so far:\n%s",
			r.opts.SettleTimeout, s.inf.lastSyncRV(), rev, open, waiting, b, s.rec.peek())
	}
	got := s.snapshot()
	return &Divergence{Layer: "settle", Diff: fmt.Sprintf("client-go did not reach cachelab's state within %v (etcd at rv %d):\n%s",
		r.opts.SettleTimeout, rev, cmp.Diff(*want, got))}
}

func atLeast(rv string, rev int64) bool {
	n, err := strconv.ParseInt(rv, 10, 64)
	return err == nil && n >= rev
}
