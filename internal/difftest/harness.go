package difftest

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/cachelab/cachelab/internal/meter"
)

// OpKind names a queue operation.
type OpKind string

// The operations a queue script is made of.
const (
	OpAdd      OpKind = "add"
	OpUpdate   OpKind = "update"
	OpDelete   OpKind = "delete"
	OpReplace  OpKind = "replace"
	OpResync   OpKind = "resync"
	OpBookmark OpKind = "bookmark"
	OpPop      OpKind = "pop"
	OpPopBatch OpKind = "popbatch"
	OpClose    OpKind = "close"
	// OpKnownSet and OpKnownRemove change the consumer's cache behind the
	// queue's back, as a store shared with other writers might.
	OpKnownSet    OpKind = "known-set"
	OpKnownRemove OpKind = "known-remove"
)

// Op is one step of a queue script.
type Op struct {
	Kind OpKind
	Obj  any    // add, update, delete, known-set, known-remove
	List []any  // replace
	RV   string // replace, bookmark
	Fail bool   // pop, popbatch: the process function returns an error
}

func (o Op) String() string {
	switch o.Kind {
	case OpReplace:
		return fmt.Sprintf("replace [%s] rv=%q", describeAll(o.List), o.RV)
	case OpBookmark:
		return fmt.Sprintf("bookmark rv=%q", o.RV)
	case OpPop, OpPopBatch:
		if o.Fail {
			return string(o.Kind) + " (process fails)"
		}
		return string(o.Kind)
	case OpResync, OpClose:
		return string(o.Kind)
	}
	return string(o.Kind) + " " + describe(o.Obj)
}

// Side is one implementation under test: a queue, the consumer cache it
// knows about (nil if none), and a count of what a Pop could return now
// (used on the cachelab side only, to avoid popping an empty queue).
type Side struct {
	Q     Queue
	Known *Known
	Len   func() int
	// ClientGo marks client-go's side, which gets client-go's tombstone type.
	ClientGo bool
	// Meter, if set, hears the queue's metrics; after every step both
	// sides' lines are compared and the values noted.
	Meter *meter.Meter
}

// queueHarness runs one queue script against cachelab and client-go and
// fails the test at the first divergence.
type queueHarness struct {
	t      testing.TB
	cl, cg Side
	// mapOrder marks a queue (FIFO) whose Replace and Resync order is map
	// order in client-go: what they queue is drained at once and compared
	// as a sorted set, since any other operation in between would act on
	// a different (random) head and diverge for reasons of order alone.
	mapOrder bool
	done     []string // the script so far, for failure messages
	trace    []string // cachelab's side, once proven equal to client-go's
	synced   bool     // HasSynced as last reported
	// bothClosedEmpty is set once a pop returned the closed error on both
	// sides: the final drain is over.
	bothClosedEmpty bool
	// reports hears errors and log lines reported outside return values.
	reports *Reports
}

// RunQueueScript builds both sides inside a testing/synctest bubble (so a
// Pop that blocks is detected, not waited for), runs ops, then closes both
// queues and drains them, comparing every step. It returns a transcript of
// the run, one line per op (what it returned or popped, and when HasSynced
// turned true), for the test to check that the script shows what it means
// to show.
func RunQueueScript(t *testing.T, mapOrder bool, build func() (cl, cg Side), ops []Op) (transcript []string) {
	t.Helper()
	var h0 *queueHarness
	reports, restore := CaptureReports()
	defer restore()
	synctest.Test(t, func(t *testing.T) {
		defer func() {
			if h0 != nil {
				transcript = h0.trace
			}
		}()
		cl, cg := build()
		h := &queueHarness{t: t, cl: cl, cg: cg, mapOrder: mapOrder, reports: reports}
		h0 = h
		for _, op := range ops {
			if !h.step(op) {
				return
			}
		}
		h.step(Op{Kind: OpClose})
		for h.step(Op{Kind: OpPop}) && !h.bothClosedEmpty {
		}
	})
	return transcript
}

func (h *queueHarness) fail(format string, args ...any) {
	h.t.Helper()
	h.t.Fatalf("divergence from client-go at step %d (%s):\n%s\nscript so far:\n  %s",
		len(h.done), h.done[len(h.done)-1], fmt.Sprintf(format, args...), strings.Join(h.done, "\n  "))
}

// step runs one op on both sides and compares. It returns false when the
// script must stop (both sides panicked alike).
func (h *queueHarness) step(op Op) bool {
	h.t.Helper()
	h.done = append(h.done, op.String())
	switch op.Kind {
	case OpPop, OpPopBatch:
		h.pop(op)
	case OpKnownSet, OpKnownRemove:
		h.known(op)
	default:
		if !h.write(op) {
			return false
		}
	}
	h.compareState()
	h.compareMeters()
	if h.mapOrder && (op.Kind == OpReplace || op.Kind == OpResync) && h.cl.Len() > 1 {
		h.drainUnordered()
	}
	return true
}

// compareMeters compares what each side's metrics heard during the step,
// and notes the values (not the "new" lines, which name the informer).
func (h *queueHarness) compareMeters() {
	h.t.Helper()
	if h.cl.Meter == nil {
		return
	}
	cl, cg := h.cl.Meter.Take(), h.cg.Meter.Take()
	if d := Diff(cl, cg); d != "" {
		h.fail("metrics (-client-go +cachelab):\n%s", d)
	}
	for _, line := range cl {
		if !strings.HasPrefix(line, "new ") {
			h.note("metric " + line)
		}
	}
}

func (h *queueHarness) known(op Op) {
	for _, k := range []*Known{h.cl.Known, h.cg.Known} {
		if k == nil {
			continue
		}
		if op.Kind == OpKnownSet {
			k.Set(op.Obj)
		} else {
			k.Remove(op.Obj)
		}
	}
}

func (h *queueHarness) write(op Op) bool {
	h.t.Helper()
	var clErr, cgErr error
	h.reports.Take()
	clPanic := CatchPanic(func() { clErr = apply(h.cl, op) })
	clReports := h.reports.Take()
	cgPanic := CatchPanic(func() { cgErr = apply(h.cg, op) })
	cgReports := h.reports.Take()
	if d := Diff(clReports, cgReports); d != "" {
		h.fail("reported errors and log lines (-client-go +cachelab):\n%s", d)
	}
	for _, r := range clReports {
		h.note("reported: " + r)
	}
	if (clPanic == "") != (cgPanic == "") {
		h.fail("panic: cachelab %q, client-go %q", clPanic, cgPanic)
	}
	if clPanic != "" {
		return false
	}
	if a, b := NormErr(clErr), NormErr(cgErr); a != b {
		h.fail("error:\n  cachelab:  %s\n  client-go: %s", a, b)
	}
	if clErr != nil {
		h.note("error: " + NormErr(clErr))
	}
	return true
}

// note adds a line to the transcript for the current op.
func (h *queueHarness) note(s string) {
	h.trace = append(h.trace, h.done[len(h.done)-1]+" → "+s)
}

func apply(s Side, op Op) error {
	q := s.Q
	op.Obj, op.List = sideObj(op.Obj, s.ClientGo), sideList(op.List, s.ClientGo)
	switch op.Kind {
	case OpAdd:
		return q.Add(op.Obj)
	case OpUpdate:
		return q.Update(op.Obj)
	case OpDelete:
		return q.Delete(op.Obj)
	case OpReplace:
		return q.Replace(op.List, op.RV)
	case OpResync:
		return q.Resync()
	case OpBookmark:
		return q.Bookmark(op.RV)
	case OpClose:
		q.Close()
		return nil
	}
	panic("difftest: unknown op " + op.Kind)
}

func (h *queueHarness) compareState() {
	h.t.Helper()
	a, b := h.cl.Q.HasSynced(), h.cg.Q.HasSynced()
	if a != b {
		h.fail("HasSynced: cachelab %v, client-go %v", a, b)
	}
	if a && !h.synced {
		h.synced = true
		h.trace = append(h.trace, "  (HasSynced is now true)")
	}
	if a, b := h.cl.Q.IsClosed(), h.cg.Q.IsClosed(); a != b {
		h.fail("IsClosed: cachelab %v, client-go %v", a, b)
	}
}

// errProcess is what a failing process function returns.
var errProcess = errors.New("process failed on purpose")

// popResult is what one Pop call did on one side.
type popResult struct {
	Popped []Popped // what process was called with (once, or never)
	Err    string   // Pop's error, normalized
}

// popOnce pops from both sides concurrently and waits, in the bubble,
// until each has returned or is durably blocked.
func (h *queueHarness) popOnce(op Op) (cl, cg popResult) {
	h.t.Helper()
	clDone := h.popAsync(h.cl, op, &cl)
	cgDone := h.popAsync(h.cg, op, &cg)
	synctest.Wait()
	clBlocked, cgBlocked := !isDone(clDone), !isDone(cgDone)
	if clBlocked || cgBlocked {
		h.cl.Q.Close()
		h.cg.Q.Close()
		<-clDone
		<-cgDone
		h.fail("pop blocked: cachelab %v, client-go %v", clBlocked, cgBlocked)
	}
	return cl, cg
}

func (h *queueHarness) popAsync(s Side, op Op, res *popResult) <-chan struct{} {
	done := make(chan struct{})
	process := func(p Popped) error {
		res.Popped = append(res.Popped, p)
		if s.Known != nil {
			for _, d := range p.Deltas {
				s.Known.Apply(d)
			}
		}
		if op.Fail {
			return errProcess
		}
		return nil
	}
	go func() {
		defer close(done)
		var err error
		if op.Kind == OpPopBatch {
			err = s.Q.PopBatch(process)
		} else {
			err = s.Q.Pop(process)
		}
		res.Err = NormErr(err)
	}()
	return done
}

// pop pops once from both sides and compares what each handed to its
// process function and returned. A pop that would block on cachelab's side
// is skipped; one that blocks on one side only is a divergence.
func (h *queueHarness) pop(op Op) {
	h.t.Helper()
	if h.cl.Len() == 0 && !h.cl.Q.IsClosed() {
		h.note("skipped (the queue is empty: Pop would block)")
		return
	}
	cl, cg := h.popOnce(op)
	if d := Diff(cl, cg); d != "" {
		h.fail("pop (-client-go +cachelab):\n%s", d)
	}
	h.bothClosedEmpty = cl.Err == "closed"
	for _, p := range cl.Popped {
		h.note(describePop(p))
	}
	if cl.Err != "" {
		h.note("error: " + cl.Err)
	}
}

// drainUnordered pops everything a map-order operation queued and compares
// the popped objects as a sorted set; the per-pop flags must still agree
// one by one, since they do not depend on which object came out.
func (h *queueHarness) drainUnordered() {
	h.t.Helper()
	h.done = append(h.done, "drain (map order: compared as a set)")
	var clObjs, cgObjs []any
	var flags []Popped
	syncedAt := -1 // how many pops it took HasSynced to turn true
	for h.cl.Len() > 0 {
		cl, cg := h.popOnce(Op{Kind: OpPop})
		clObjs = append(clObjs, takeDeltas(&cl)...)
		cgObjs = append(cgObjs, takeDeltas(&cg)...)
		if d := Diff(cl, cg); d != "" {
			h.fail("pop flags (-client-go +cachelab):\n%s", d)
		}
		flags = append(flags, cl.Popped...)
		wasSynced := h.synced
		h.compareState()
		if h.synced && !wasSynced {
			syncedAt = len(flags)
			h.trace = h.trace[:len(h.trace)-1] // re-added below, in place
		}
	}
	if d := Diff(sortPopped(clObjs), sortPopped(cgObjs)); d != "" {
		h.fail("drained set (-client-go +cachelab):\n%s", d)
	}
	for i, o := range clObjs {
		p := flags[i]
		p.Deltas = o.([]D)
		h.note(describePop(p))
		if i+1 == syncedAt {
			h.trace = append(h.trace, "  (HasSynced is now true)")
		}
	}
}

// takeDeltas moves the popped objects out of r, leaving the flags.
func takeDeltas(r *popResult) []any {
	var out []any
	for i := range r.Popped {
		out = append(out, r.Popped[i].Deltas)
		r.Popped[i].Deltas = nil
	}
	return out
}

func sortPopped(xs []any) []any {
	sort.SliceStable(xs, func(i, j int) bool { return fmt.Sprint(xs[i]) < fmt.Sprint(xs[j]) })
	return xs
}
