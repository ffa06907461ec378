package sim

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cachelab/cachelab/sim/scenario"
	"github.com/cachelab/cachelab/sim/trace"
	"github.com/cachelab/cachelab/sim/world"
)

// settle waits until both sides have fully processed the step. cachelab
// is settled when its reflector has caught up with etcd (or waits at a
// held connection, or on the fake clock), its queue and handlers have
// no work left, and every goroutine of the side is parked: none is on
// its way to a read of the scenario's clock (parked.go). client-go's queue and listeners cannot be seen from
// outside, so once its reflector has caught up it is given until the
// timeout to reach the same handler call counts, HasSynced values and
// indexer as cachelab; if it does not, that is a divergence, reported with
// what each side had.
func (r *runner) settle() error {
	r.where.settling()
	r.letHeldGo()
	return r.untilParked(func(pairs [][2]*side, rev int64) error {
		for _, p := range pairs {
			cl, cg := p[0], p[1]
			if err := r.settleSide(cl, rev, nil); err != nil {
				return err
			}
			want := cl.polled()
			if err := r.settleSide(cg, rev, &want); err != nil {
				return err
			}
		}
		return nil
	}, func(pairs [][2]*side, rev int64) {
		for _, s := range r.sides {
			if !r.live(s) {
				s.unseenWrite = false
			}
		}
		for _, p := range pairs {
			// A side that settled without reaching etcd's revision
			// waits at a held connection: the write it did not see is
			// still unseen when the connection comes back, and the
			// progress request is still needed then.
			if cl, cg := p[0], p[1]; r.reached(cl, rev) && r.reached(cg, rev) {
				cl.unseenWrite, cg.unseenWrite = false, false
			}
		}
	})
}

// settleSecond settles within an advance of the watch-cache world,
// after each second: the cache, cachelab, and client-go's connection (its
// requests made, its watches open or waiting) and resync tick (handled),
// so that both sides' requests reach the cache at the same second of its
// clock, and both read the clock at the same second. client-go is
// not held to cachelab's state here: its backoffs, drawn by an unseeded
// source, may keep it a second or two behind until the step ends, when
// settle holds it to the same state.
func (r *runner) settleSecond() error {
	r.where.settling()
	return r.untilParked(func(pairs [][2]*side, rev int64) error {
		for _, p := range pairs {
			if err := r.settleSide(p[0], rev, nil); err != nil {
				return err
			}
		}
		for _, p := range pairs {
			if err := r.settleClientGoSecond(p[1], rev); err != nil {
				return err
			}
		}
		return nil
	}, nil)
}

// settleClientGoSecond is settleSecond's wait for one client-go informer.
func (r *runner) settleClientGoSecond(cg *side, rev int64) error {
	deadline := time.Now().Add(r.opts.SettleTimeout)
	for {
		c := cg.conn.State()
		// A resync tick the second fired must be handled before the
		// clock moves on: client-go's reflector asks then whether each
		// handler's resync is due, by the clock's time, and a clock
		// already moved past the next second would answer otherwise.
		handled := !cg.ticks.pending() && r.poppedAfterTick(cg)
		if handled && (c.Parked || c.Waiting > 0 || r.where.heldByCut(cg) || c.Open > 0 && !c.AskedBookmark && !c.Relaying && !c.Expiring && !c.Ending && r.reached(cg, rev) || r.where.stalled(cg, c)) &&
			cg.conn.State() == c { // as in settleSide: still as c says
			return nil
		}
		if time.Now().After(deadline) {
			return r.settleTimeout(cg, rev, nil, c, r.opts.SettleTimeout)
		}
		select {
		case <-time.After(2 * time.Millisecond):
		case <-r.ctx.Done():
			return r.ctx.Err()
		}
	}
}

// poppedAfterTick reports whether client-go's informer has popped what
// its resync ticks queued, once it has handled a tick since it was last
// found drained (clientGoInformer.drained): a goroutine dump, so only
// then.
func (r *runner) poppedAfterTick(cg *side) bool {
	ci, ok := cg.inf.(clientGoInformer)
	if !ok {
		return true
	}
	n := cg.ticks.ticksHandled()
	if n == cg.ticksDrained {
		return true
	}
	if !ci.drained() {
		return false
	}
	cg.ticksDrained = n
	return true
}

// activity is what cacheWorld.quiescent keeps a yes for: the clock's time,
// and each side's connection state and trace length.
type activity struct {
	now   time.Time
	conns [maxSides]world.State
	lines [maxSides]int
}

// maxSides bounds a run's sides: start's informer and the factories'
// (scenario.MaxInformers in all; Parse refuses one more), two sides each.
const maxSides = 2 * scenario.MaxInformers

func (r *runner) cacheActivity() activity {
	a := activity{now: r.clock.Now()}
	for i, s := range r.sides {
		a.conns[i], a.lines[i] = s.conn.State(), s.rec.Count()
	}
	return a
}

// reached reports whether a side's informer has had all that the
// world's revision rev means for it: the world's answer (runWorld).
func (r *runner) reached(s *side, rev int64) bool { return r.where.reached(s, rev) }

// memberApplied reports whether the etcd member serving the side's
// connection has applied etcd's revision rev (etcdWorld.memberApplied):
// always, for a side of no informer of the run's.
func (r *runner) memberApplied(s *side, rev int64) bool {
	return !slices.Contains(r.sides, s) || r.where.applied(s, rev)
}

func (r *runner) settleSide(s *side, rev int64, want *snapshot) error {
	began := time.Now()
	relists := s.conn.Relists()
	wait := r.newSettleWait(s, want)
	var asked time.Time // when settling last asked etcd for progress
	if s.conn.State().AskedBookmark {
		asked = began // the progress step has just asked
	}
	for {
		if s.crashed.Load() {
			return nil // the detector stopped it (detector.go): nothing more will come
		}
		c := s.conn.State()
		// Work still on its way to the store. cachelab reports when a
		// Replace is done and when each event is applied; client-go cannot,
		// and waiting for cachelab's state below covers it.
		busy := c.AskedBookmark || c.Relaying || c.Expiring || c.Ending
		if want == nil {
			busy = busy || c.Listing || c.Unapplied
		}
		// A call held while disconnected waits for reconnect: above
		// the client (Waiting), or over the wire, a try its client made
		// again after the cut, in the side's proxy (heldByCut).
		caughtUp := c.Parked || c.Waiting > 0 || r.where.heldByCut(s) || (c.Open > 0 && !busy && r.reached(s, rev)) || r.where.stalled(s, c)
		// Each check reads the connection afresh, and the informer goes
		// on meanwhile: a verdict holds only if the connection is still
		// as c says once it is made. (Over the wire, reached found the
		// server and the client done with a watch that c still had
		// open, not busy: the watch had just ended with a 410, and the
		// informer was about to relist.)
		same := func() bool { return s.conn.State() == c }
		if caughtUp {
			if want == nil {
				if r.idle(s) && same() {
					return nil
				}
			} else if got := r.comparable(s.counters()); got.sameCounters(r.comparable(*want)) && r.linesLike(s) {
				// The counters and line counts first: they cost the
				// same at any number of objects; the indexers are
				// compared once those agree.
				if r.settledLike(s.polled(), *want) && same() {
					return nil
				}
			} else if overshoots(got, *want) {
				// Counts only grow: client-go has done more than
				// cachelab did, and waiting cannot make them agree. The
				// comparison that follows says where.
				return nil
			}
		} else if r.where.asksProgress() && c.Open > 0 && (s.unseenWrite && time.Since(asked) > time.Second || c.AskedBookmark && time.Since(asked) > 3*time.Second) &&
			r.memberApplied(s, rev) {
			// Writes the informer's selectors filter out never reach it;
			// a progress notification tells it etcd's revision. (A
			// progress step's request that etcd dropped, because a
			// watch was briefly behind, is asked again.)
			_ = s.conn.Base().RequestProgress(r.ctx)
			asked = time.Now()
		}
		if wait.stuck() {
			return r.settleTimeout(s, rev, want, c, time.Since(began))
		}
		if n := s.conn.Relists() - relists; want == nil && n >= maxRelists {
			return r.refusedRelists(s, n)
		}
		select {
		case <-s.conn.Progress():
		case <-time.After(2 * time.Millisecond):
		case <-r.ctx.Done():
			return r.ctx.Err()
		}
	}
}

// settleWait decides when a side that has not settled is stuck: when it
// has made no progress (no new trace line, no change in its state) for
// the settle timeout. A relist backoff in progress is progress: client-go
// waits it on the real clock, and it grows to 30-60 s after repeated
// failures, so a fixed bound on the whole step would fail runs in which
// both sides agree.
type settleWait struct {
	r        *runner
	s        *side
	clientGo bool // waiting for client-go to reach cachelab's state
	lines    int
	state    world.State
	deadline time.Time
}

func (r *runner) newSettleWait(s *side, want *snapshot) *settleWait {
	w := &settleWait{r: r, s: s, clientGo: want != nil}
	w.mark()
	return w
}

// mark notes the side's progress so far and restarts the timeout. For
// client-go, whose backoff cannot be seen, cachelab's backoff in the
// same step stands in: client-go's is at most twice as long (both draw
// from [d, 2d) around the same base).
func (w *settleWait) mark() {
	w.lines, w.state = w.s.rec.Count(), w.s.conn.State()
	w.deadline = time.Now().Add(w.r.opts.SettleTimeout)
	end, d := w.s.conn.Backoff()
	if w.clientGo {
		end, d = w.s.peer.conn.Backoff()
		end = end.Add(d)
	}
	if end.Add(w.r.opts.SettleTimeout).After(w.deadline) {
		w.deadline = end.Add(w.r.opts.SettleTimeout)
	}
}

// stuck reports whether the side has made no progress for the timeout.
// Every request, event, queue input and handler call is a trace line, so
// a side that does anything records something.
func (w *settleWait) stuck() bool {
	if w.s.rec.Count() != w.lines || w.s.conn.State() != w.state {
		w.mark()
		return false
	}
	return time.Now().After(w.deadline)
}

// idle reports whether cachelab has no work in flight, ignoring handlers
// the scenario holds (slow ones).
func (r *runner) idle(s *side) bool {
	// A resync tick that fired is handled on the reflector's own
	// goroutine, which queues the Sync deltas only then (in either
	// world).
	if s.ticks.pending() {
		return false
	}
	if s.cfg.queue {
		return true // the simulator pops the queue itself, after settling
	}
	b, _ := s.inf.backlog()
	if b.Queued > 0 || b.SyncPending > 0 {
		return false
	}
	// Registrations the scenario did not add (a controller's) are never
	// held: any notification on its way to one is work in flight.
	for name, n := range b.Handlers {
		if n > 0 && s.handlerNamed(name) == nil {
			return false
		}
	}
	for _, h := range s.handlers {
		if h.removed {
			continue
		}
		if h.slow() {
			// A held handler is idle once it is in its held call; until
			// then, a notification is on its way to it.
			if b.Handlers[h.name] > 0 && !h.isBlocked() {
				return false
			}
			continue
		}
		if b.Handlers[h.name] > 0 || h.heldInInitialList() { // released, line not yet recorded
			return false
		}
	}
	return true
}

// overshoots reports whether client-go has made more handler calls, or
// queued more objects, than cachelab made in all: counts that only grow.
func overshoots(got, want snapshot) bool {
	if got.Enqueued > want.Enqueued {
		return true
	}
	for k, n := range got.Calls {
		if n > want.Calls[k] {
			return true
		}
	}
	return false
}

// settledLike reports whether client-go has reached cachelab's settled
// state: what it must have produced before the two are compared.
func (r *runner) settledLike(got, want snapshot) bool {
	got, want = r.comparable(got), r.comparable(want)
	got.StoreRV, want.StoreRV = comparableStoreRV(got, r.classic), comparableStoreRV(want, r.classic)
	return got.equal(want)
}

// linesLike reports whether client-go has recorded, so far, as many lines
// as cachelab in each layer that is compared. A state can match before
// the last of the lines that led to it is recorded: the bookmark that
// ends a watch-list changes nothing in a store that nothing changed, and
// a request line can follow the event that caused it by a moment.
// Comparing then would see a difference that is not there. Counting is
// enough to wait on (trace.SameCounts): lines are only added, so what the
// lines are is looked at once, by the comparison after settling.
func (r *runner) linesLike(cg *side) bool {
	return trace.SameCounts(cg.peer.rec, cg.rec, r.queueWorld())
}

// clipLines keeps the first n lines of text, saying how many were left out.
func clipLines(text string, n int) string {
	lines := strings.Split(text, "\n")
	if len(lines) <= n {
		return text
	}
	return strings.Join(lines[:n], "\n") + fmt.Sprintf("\n... %d more lines", len(lines)-n)
}

func atLeast(rv string, rev int64) bool {
	n, err := strconv.ParseInt(rv, 10, 64)
	return err == nil && n >= rev
}
