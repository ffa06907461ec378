package sim

import (
	"context"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/cachelab/cachelab/internal/goroutines"
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

// labelled returns ctx with the side's label, for a goroutine to set on
// itself (pprof.SetGoroutineLabels).
func (s *side) labelled(ctx context.Context) context.Context {
	return pprof.WithLabels(ctx, pprof.Labels(sideLabel, s.id))
}

// busy returns the first goroutine of the side that is not parked (its
// header and first frames, for messages), or "" if every one is. found
// is false when the dump has no goroutine of the side at all: a running
// informer always has one, so the labels are not being shown.
func (s *side) busy() (g string, found bool) {
	goroutines.ShowLabels()
	for _, g := range goroutines.All() {
		if goroutines.Label(g, sideLabel) != s.id {
			continue
		}
		found = true
		if !goroutines.Parked(goroutines.State(g)) {
			return clipLines(strings.TrimSpace(g), 8), true
		}
	}
	return "", found
}

// parked reports whether every goroutine of the side is parked (busy).
func (s *side) parked() bool {
	g, _ := s.busy()
	return g == ""
}
