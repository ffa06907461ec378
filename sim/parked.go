package sim

import (
	"context"
	"fmt"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cachelab/cachelab/internal/goroutines"
	"github.com/cachelab/cachelab/sim/world"
)

// Settling waits for more than the states it can see. A component goes
// on after the last thing the runner can observe of it: cachelab's
// reflector, once the watch-list's cache is stored (Replace, which the
// connection shows), reads the scenario's clock for its next watch's
// start; client-go's does the same, and neither says so. A step judged
// settled between the two lets the next step move the clock first, and
// the watch's age (and whether it is "very short") then depends on how
// fast the machine was (issue 47: explore, under load). Every read of
// the clock, a timer made, a deadline computed, is such a point; the
// runner cannot list them in client-go's code, and should not have to in
// cachelab's.
//
// What it can see is whether anything of a side is still on its way:
// each side's goroutines carry a pprof label (sideLabel), set where the
// side's informer, its handlers, its factory and its controller are
// started and, over HTTPS, where kube-apiserver begins to serve the
// side's requests; goroutines inherit their creator's labels, so every
// goroutine started on the side's behalf carries it, down to its HTTP
// client's connections and the watch cache's sender for its watch. A
// side is settled only once every goroutine carrying its label is parked
// (goroutines.Parked): waiting for a channel, a condition or the
// network, none running, runnable, locked or asleep. Then nothing of the
// side reads the clock until something from outside wakes it: the
// runner's next step, the clock itself, or data on its way over the
// network, which the connection's states (world.Conn, kube-apiserver's
// Pending and Watches) account for.
const sideLabel = "cachelab.side"

// sideIDs numbers the sides of every run in the process: runs in
// parallel (tests) must not read each other's goroutines as their own.
var sideIDs atomic.Int64

// newSideID is a new side's label value.
func newSideID() string { return "s" + strconv.FormatInt(sideIDs.Add(1), 10) }

// userLabels is the label of the goroutines that serve user's requests
// in kube-apiserver (kubeapiserver.Options.Labels): its side's.
func (r *runner) userLabels(user string) pprof.LabelSet {
	id, ok := r.users.Load(user)
	if !ok {
		return pprof.Labels()
	}
	return pprof.Labels(sideLabel, id.(string))
}

// do runs f with the side's label on the calling goroutine, so that every
// goroutine f starts is the side's (see sideLabel).
func (s *side) do(f func()) {
	pprof.Do(context.Background(), pprof.Labels(sideLabel, s.id), func(context.Context) { f() })
}

// mark is what a side has shown so far: its connection's state and how
// many trace lines it has.
type mark struct {
	state world.State
	lines int
}

func (s *side) mark() mark { return mark{s.conn.State(), s.rec.Count()} }

// parkedAsLeft reports which of sides still has a goroutine on its way
// (nil if none): one not parked in the dump, or a side whose connection
// or trace changed while the dump was taken, so that the checks that
// came before it no longer hold. Each side's goroutines are found by its
// label (sideLabel), all in one dump: a dump costs what the process's
// goroutines cost, and a long advance settles thousands of times.
//
// dump, if not nil, is a dump taken since the sides last changed (their
// marks are the same now): it is read instead of a new one.
func parkedAsLeft(sides []*side, dump []string) map[*side]string {
	if len(sides) == 0 {
		return nil
	}
	before := make([]mark, len(sides))
	byID := make(map[string]*side, len(sides))
	for i, s := range sides {
		before[i] = s.mark()
		byID[s.id] = s
	}
	if dump == nil {
		goroutines.ShowLabels()
		dump = goroutines.All()
	}
	var busy map[*side]string
	for _, g := range dump {
		s, ok := byID[goroutines.Label(g, sideLabel)]
		if !ok {
			continue
		}
		if _, noted := busy[s]; !noted && !goroutines.Parked(goroutines.State(g)) {
			if busy == nil {
				busy = map[*side]string{}
			}
			busy[s] = clipLines(strings.TrimSpace(g), 8)
		}
	}
	for i, s := range sides {
		if _, noted := busy[s]; !noted && s.mark() != before[i] {
			if busy == nil {
				busy = map[*side]string{}
			}
			busy[s] = "" // it moved on while the dump was taken
		}
	}
	return busy
}

// parkWait bounds untilParked's rounds: a side whose goroutines never all
// park, with nothing else to show for it (no trace line, no change in
// its connection), for the settle timeout, is a goroutine that runs for
// ever, and the run says which.
type parkWait struct {
	r        *runner
	sides    []*side
	marks    []mark
	deadline time.Time
}

func (r *runner) newParkWait(sides []*side) *parkWait {
	w := &parkWait{r: r, sides: sides}
	w.progress()
	return w
}

// progress notes each side's mark, and restarts the timeout if any moved.
func (w *parkWait) progress() {
	marks := make([]mark, len(w.sides))
	for i, s := range w.sides {
		marks[i] = s.mark()
	}
	if !slices.Equal(marks, w.marks) {
		w.marks, w.deadline = marks, time.Now().Add(w.r.opts.SettleTimeout)
	}
}

// next waits a moment for the busy sides to go on, or fails once they
// have made no progress for the settle timeout.
func (w *parkWait) next(busy map[*side]string) error {
	w.progress()
	if time.Now().After(w.deadline) {
		for _, s := range w.sides {
			if g := busy[s]; g != "" {
				return fmt.Errorf("%s did not settle: no progress for %v; if the machine is busy, try a longer --settle-timeout.\n"+
					"It was waiting for a goroutine of its own to park (parked.go), this one:\n%s\nThe step's last trace lines:\n%s",
					s.impl, w.r.opts.SettleTimeout, g, s.rec.Peek(20))
			}
		}
	}
	select {
	case <-time.After(time.Millisecond):
		return nil
	case <-w.r.ctx.Done():
		return w.r.ctx.Err()
	}
}

// busy returns the first goroutine of the side that is not parked (its
// header and first frames), or "".
func (s *side) busy() string {
	return parkedAsLeft([]*side{s}, nil)[s]
}

// untilParked settles the cache, then the live sides (round), until
// every goroutine of every live side is parked as the round left it
// (parked.go): one goroutine dump for all of them, taken once the
// round's checks all say settled. A side found busy, a reflector on its
// way to a read of the clock, say, goes on, and the round is made again.
// then, if set, runs once all is settled.
func (r *runner) untilParked(round func(pairs [][2]*side, rev int64) error, then func(pairs [][2]*side, rev int64)) error {
	var wait *parkWait
	for {
		if err := r.where.settleWorld(); err != nil {
			return err
		}
		pairs := r.livePairs()
		var rev int64
		if len(pairs) > 0 {
			var err error
			if rev, err = r.revision(); err != nil {
				return err
			}
			if err := round(pairs, rev); err != nil {
				return err
			}
		}
		sides := make([]*side, 0, 2*len(pairs))
		for _, p := range pairs {
			sides = append(sides, p[0], p[1])
		}
		busy := parkedAsLeft(sides, r.where.quietMoment())
		if busy == nil {
			if then != nil {
				then(pairs, rev)
			}
			return nil
		}
		if wait == nil {
			wait = r.newParkWait(sides)
		}
		if err := wait.next(busy); err != nil {
			return err
		}
	}
}

// runLabel labels the goroutines a run's world starts on its own behalf:
// kube-apiserver's watch caches (asWorld). Its sides' carry sideLabel.
const runLabel = "cachelab.run"

// runIDs numbers the runs of the process, for runLabel.
var runIDs atomic.Int64

// asWorld runs f, which starts the world's goroutines (a watch cache),
// with the run's label: every goroutine it starts is the run's.
func (r *runner) asWorld(f func()) {
	if r.runID == "" {
		r.runID = "r" + strconv.FormatInt(runIDs.Add(1), 10)
	}
	pprof.Do(context.Background(), pprof.Labels(runLabel, r.runID), func(context.Context) { f() })
}

// ofThisRun is dump without the goroutines another run in the process
// labelled as its own: its sides' and its world's. A watch cache is
// quiet when every goroutine of the cacher's is parked, and in a process
// that runs many scenarios at once (explore -j, FuzzRunner) another run's
// cacher is always busy somewhere; waiting for all of them at one moment
// made a run's settling wait on the others (seen when the tests first ran
// the catalog side by side: runs whose clock reads were late kept the
// others from settling for 10 s). Unlabelled goroutines stay: they may be
// this run's.
func (r *runner) ofThisRun(dump []string) []string {
	mine := map[string]bool{}
	r.users.Range(func(_, id any) bool { mine[id.(string)] = true; return true })
	var out []string
	for _, g := range dump {
		if side := goroutines.Label(g, sideLabel); side != "" && !mine[side] {
			continue
		}
		if run := goroutines.Label(g, runLabel); run != "" && run != r.runID {
			continue
		}
		out = append(out, g)
	}
	return out
}
