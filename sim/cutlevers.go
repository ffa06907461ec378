package sim

import (
	"fmt"
	"strconv"

	"github.com/cachelab/cachelab/sim/trace"
)

// Faults inside a step. A lever pulled between steps cannot fall between
// two events of one step: between the second and third of three creates
// a watch relays, or among a watch-list's initial events. With
// after-events=N, disconnect and close-watch are armed instead: each
// informer's connection (world.Conn.CutAfter) counts the watch events it
// hands its informer in the next step, and right after the N-th it ends
// the watches there. Each connection counts its own stream, so both
// implementations are cut after the same event. An arming that has not
// fired by the end of that step is taken back, and the step says so.

// armCut arms the cut a's after-events asks for, and reports whether it
// did (false: the lever is pulled now, as without after-events).
func (r *runner) armCut(a args, drop bool) (bool, error) {
	v, ok := a.value("after-events")
	if !ok {
		return false, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return true, err
	}
	r.cut, r.cutDrop, r.cutN = r.stepN, drop, n
	for _, s := range r.sides {
		s.conn.CutAfter(n, drop)
	}
	what := "the server will close each informer's watch"
	if drop {
		what = "the connection will drop (watches end, new requests wait)"
	}
	first := "its first watch event"
	if n > 1 {
		first = fmt.Sprintf("its first %d watch events", n)
	}
	r.note(trace.LayerSim, "", fmt.Sprintf("%s inside the next step, right after each informer has taken %s of it", what, first))
	return true, nil
}

// disarm takes back a cut armed for the step that has just settled,
// where it did not fire: fewer watch events came than it waited for.
func (r *runner) disarm() {
	unfired := 0
	for _, s := range r.sides {
		if s.conn.Disarm() {
			unfired++
		}
	}
	events := plural(r.cutN, "event", "events")
	switch {
	case unfired == len(r.sides):
		r.note(trace.LayerSim, "", fmt.Sprintf("no cut: fewer than %d watch %s came in this step (the armed fault is taken back)", r.cutN, events))
	case unfired > 0:
		r.note(trace.LayerSim, "", fmt.Sprintf("an informer that took fewer than %d watch %s in this step is not cut (the armed fault is taken back there)", r.cutN, events))
	}
	r.cut = 0
}
