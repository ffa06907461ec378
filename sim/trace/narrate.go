package trace

import (
	"fmt"
	"strconv"
)

// --- why: the causes a story gives ---
//
// A sentence says what an event did to an object; a learner then asks
// why: why was ns0/b removed from the indexer at the reconnect, when
// nothing deleted it then? The trace often knows: a watch ended with
// 410, the relist that followed did not list ns0/b, and the delete it
// missed happened while the informer was disconnected. A Narrator reads
// a run's steps in order and remembers what each did, so that a later
// sentence can name its cause (issue 47):
//
//	removed from the indexer (it was at rv 3): the relist w3, after the
//	410 on w2, replaced the store, and ns0/b was not in its list at rv 5
//
// Causes come only from the trace: the world's lines and the compared
// layers of each side (Compared), of the step and the steps before it.
// The layers only cachelab shows (its reflector's words, its pops) are
// never read, so that both sides tell the same story where they agree.
// Where the trace does not show a cause, a sentence says no more than
// what happened.

// Told is how one step's events are told, per side (World, Cachelab,
// ClientGo): a Telling for each event, in the events' order.
type Told map[string][]Telling

// A Narrator tells a run's steps, one after the other, with the causes
// the earlier steps show. Give it every step, in order (Step); it keeps
// a little about each step, not the events themselves.
type Narrator struct {
	header Header
	step   int
	world  worldMemory
	sides  map[sideKey]*sideMemory
}

// sideKey names one informer of one side: a run with several informers
// (a scenario's factories) has a memory for each.
type sideKey struct{ side, informer string }

// NewNarrator returns a Narrator for a run with header h: its server and
// stack decide some words (a compaction is etcd's only where etcd
// serves the watches; a tombstone is P3 in the default stack, D4 in the
// classic one).
func NewNarrator(h Header) *Narrator {
	return &Narrator{header: h, world: worldMemory{writes: map[string]write{}, deletes: map[string]write{}}, sides: map[sideKey]*sideMemory{}}
}

// Step tells sr's events, each sentence with its cause where the trace
// shows it, and remembers what the step did for the steps after it.
// queueWorld is as for Tell.
func (n *Narrator) Step(sr StepResult, queueWorld bool) Told {
	n.step = sr.Index
	told := Told{World: Tell(sr.World, World, queueWorld)}
	unseen := n.world.see(sr.World, n.step)
	running := n.running()
	if n.world.stopped == n.step {
		// The next start makes new informers: what the old ones did
		// explains nothing of theirs.
		clear(n.sides)
	}
	for _, side := range []string{Cachelab, ClientGo} {
		events := sr.Sides[side]
		t := Tell(events, side, queueWorld)
		for i, e := range events {
			if !Compared(e.Layer, queueWorld) {
				continue
			}
			why := n.memory(side, e.Informer).see(n, e)
			if why != "" && t[i].Sentence != "" && !t[i].Whole {
				t[i].Sentence += why
			}
		}
		told[side] = t
	}
	// A write that no side heard of in this step says why, if the world
	// shows it and an informer was running to hear of it: heard of, the
	// sides' sentences tell the rest.
	var heard map[string]bool
	for i, why := range unseen {
		if why == "" || !running {
			continue
		}
		if heard == nil {
			heard = heardOf(sr, queueWorld)
		}
		if !heard[sr.World[i].Key] {
			told[World][i].Sentence += why
		}
	}
	return told
}

// running reports whether an informer has made a request since the last
// stop, before this step.
func (n *Narrator) running() bool {
	for _, m := range n.sides {
		if m.seq > 0 {
			return true
		}
	}
	return false
}

func (n *Narrator) memory(side, informer string) *sideMemory {
	k := sideKey{side, informer}
	m := n.sides[k]
	if m == nil {
		m = newSideMemory()
		n.sides[k] = m
	}
	return m
}

// heardOf is the keys the sides' compared events of the step name.
func heardOf(sr StepResult, queueWorld bool) map[string]bool {
	heard := map[string]bool{}
	for _, side := range []string{Cachelab, ClientGo} {
		for _, e := range sr.Sides[side] {
			if e.Key != "" && Compared(e.Layer, queueWorld) {
				heard[e.Key] = true
			}
		}
	}
	return heard
}

// worldMemory is what the world's lines have said so far: the
// connection, the watch cache, etcd's compaction, the clock, and each
// write.
type worldMemory struct {
	disconnected int // the step of the disconnect still in force; 0 when connected
	reconnected  int // the step of the last reconnect
	held         int // the step of the hold-cache still in force; 0 when none
	released     int // the step of the last release-cache
	compacted    int // the step of the last compaction
	compactedRV  string
	clockMoved   int // the step the clock last moved in
	stopped      int // the step the informers last stopped in
	// travelled is the step etcd last went back in time in (a restore,
	// a wipe), to travelledRV, by lever travel.
	travelled   int
	travelledRV string
	travel      string
	// ended is the last lever that ended the informers' watches, and
	// its step.
	ended     string
	endedStep int
	// writes are etcd's writes by key@rv, and deletes the last delete
	// of each key: a delete's line has the object's last rv, its watch
	// event the revision of the delete.
	writes  map[string]write
	deletes map[string]write
}

// write is one write to etcd and the world it was made in.
type write struct {
	step         int
	op, uid      string
	disconnected int // the disconnect's step, if the connection was lost
	held         int // the hold-cache's step, if a watch cache was held
}

// see takes in a step's world lines, in order, and returns for each
// write what a story says of it when no side hears of it in the step:
// that the connection was lost, or the cache held; "" otherwise.
func (w *worldMemory) see(events []Event, step int) []string {
	unseen := make([]string, len(events))
	for i, e := range events {
		switch e.Kind {
		case KindWrite:
			wr := write{step: step, op: e.Op, uid: e.UID, disconnected: w.disconnected, held: w.held}
			if e.Op == "delete" {
				w.deletes[e.Key] = wr
			} else {
				w.writes[e.Key+"@"+e.RV] = wr
			}
			unseen[i] = w.notReached(e)
		case KindWorld:
			w.lever(e, step)
		}
	}
	return unseen
}

// lever takes in a world line that reports a lever (Event.Op).
func (w *worldMemory) lever(e Event, step int) {
	switch e.Op {
	case LeverDisconnect:
		if w.disconnected == 0 {
			w.disconnected = step
		}
		w.ended, w.endedStep = "the disconnect of step "+strconv.Itoa(step)+" dropped the watch", step
	case LeverReconnect:
		w.disconnected, w.reconnected = 0, step
	case LeverHoldCache:
		if w.held == 0 {
			w.held = step
		}
	case LeverReleaseCache:
		w.held, w.released = 0, step
	case LeverCompact:
		w.compacted, w.compactedRV = step, e.RV
	case LeverClock:
		w.clockMoved = step
	case LeverStop:
		w.stopped = step
	case LeverEtcdRestore, LeverEtcdWipe:
		w.travelled, w.travelledRV, w.travel = step, e.RV, e.Op
	case LeverCloseWatch:
		w.ended, w.endedStep = "the server closed the watch (close-watch, step "+strconv.Itoa(step)+")", step
	case LeverRestartAPIServer:
		w.ended, w.endedStep = "kube-apiserver's restart (step "+strconv.Itoa(step)+") ended the watch", step
	}
}

// notReached is why a write does not reach the informer, where the
// world says: the connection is lost, or a watch cache is held.
func (w *worldMemory) notReached(e Event) string {
	what := "the " + e.Op + " at rv " + e.RV
	if e.Op == "delete" { // its rv is the object's last, not the delete's
		what = "the delete"
	}
	switch {
	case w.disconnected > 0:
		return fmt.Sprintf("; the informer was disconnected (step %d), so %s did not reach it", w.disconnected, what)
	case w.held > 0:
		return fmt.Sprintf("; the watch cache was held (step %d), so %s waits there and did not reach the informer", w.held, what)
	}
	return ""
}

// late is why a watch event about an earlier step's write comes now,
// where the world says: the write waited in a held watch cache released
// in this step, or was made while the informer was disconnected and the
// watch r asks for what came after it.
func (w *worldMemory) late(e Event, r *request, step int) string {
	wr, ok := w.writes[e.Key+"@"+e.RV]
	if e.Op == "DELETED" {
		wr, ok = w.deletes[e.Key]
	}
	if !ok || wr.step >= step || wr.uid != "" && e.UID != "" && wr.uid != e.UID {
		return ""
	}
	switch {
	case wr.held > 0 && w.released == step:
		return fmt.Sprintf(" (the %s of step %d, which waited in the held watch cache until its release in this step)", wr.op, wr.step)
	case wr.disconnected > 0 && w.reconnected >= wr.step && r != nil && r.rv != "":
		return fmt.Sprintf(" (the %s of step %d, made while the informer was disconnected: %s watches from rv %s, so it gets it now)", wr.op, wr.step, r.id, r.rv)
	}
	return ""
}

// selector is why a watch sends DELETED or ADDED for an update: the
// update took the object out of the informer's selector, or brought it
// in (E5).
func (w *worldMemory) selector(e Event) string {
	wr, ok := w.writes[e.Key+"@"+e.RV]
	if !ok || wr.op != "update" || wr.uid != "" && e.UID != "" && wr.uid != e.UID {
		return ""
	}
	switch {
	case e.Op == "DELETED":
		return ": the update at rv " + e.RV + " took it out of the informer's selector, so the server sent DELETED (E5)"
	case e.Op == "ADDED" && !e.Initial:
		return ": the update at rv " + e.RV + " brought it into the informer's selector, so the server sent ADDED (E5)"
	}
	return ""
}

// why says what in the world's past explains a request's error: etcd
// had compacted the revision a request that got 410 asked for (where
// etcd serves the informers: the watch cache answers 410 from its own
// history, C4, whatever etcd kept), or had gone back to before the
// revision a request that got 504 asked for.
func (n *Narrator) why(f failure) string {
	w := n.world
	switch {
	case f.status == 410 && w.compacted > 0 && n.header.Server == "etcd" && rvBefore(f.rv, w.compactedRV):
		return fmt.Sprintf(" (%s asked for rv %s, and etcd had compacted its history before rv %s at step %d)", f.request, f.rv, w.compactedRV, w.compacted)
	case f.status == 504 && w.travelled > 0 && rvBefore(w.travelledRV, f.rv):
		return fmt.Sprintf(" (%s asked for rv %s, but etcd had gone back to rv %s at step %d: %s)", f.request, f.rv, w.travelledRV, w.travelled, w.travel)
	}
	return ""
}

// rvBefore reports whether resourceVersion a is a number below b's.
func rvBefore(a, b string) bool {
	x, err1 := strconv.ParseInt(a, 10, 64)
	y, err2 := strconv.ParseInt(b, 10, 64)
	return err1 == nil && err2 == nil && x > 0 && x < y
}
