package sim

import (
	"sync"
	"time"

	"github.com/cachelab/cachelab/sim/trace"
	"k8s.io/apimachinery/pkg/api/meta"
)

// handler is a scenario's event handler, one per side. It records every
// call as a trace line, keeps the view of the world its calls build (for
// the invariants), and can be slow: a slow handler's calls wait until the
// scenario releases it, which shows that a slow handler delays only itself
// (P10).
type handler struct {
	name   string
	resync time.Duration // -1: the informer's default
	rec    *trace.Recorder

	reg     interface{ HasSynced() bool } // the registration, once added
	handle  any                           // what RemoveEventHandler takes
	removed bool

	mu        sync.Mutex
	calls     int
	view      map[string]string // key -> rv, rebuilt from the calls
	anomalies []string          // calls that did not fit the view
	// viewChecked remembers the indexer the view last agreed with.
	viewChecked equalOnce
	gate        chan struct{} // non-nil while slow: calls wait for it to close
	// heldInitial is set while the handler is held in an initial-list
	// call, until that call's line is recorded after release.
	heldInitial bool
	blocked     bool // in a call, waiting for release
	// frozen is set when the informers stop while the handler is held
	// (letGo): its calls from then on are neither recorded nor counted.
	// How much of its buffer is still delivered is chance in client-go
	// (its listener selects at random between its closed input and the
	// next delivery), so no side shows any of it.
	frozen bool
	// syncedAtStop is the registration's HasSynced when it was frozen:
	// whether it turns true afterwards depends on those same chance
	// deliveries, so a frozen handler shows this value from then on.
	syncedAtStop bool
	// frozenInInitial is set when it was frozen in an initial-list call:
	// in the classic stack its HasSynced stays hidden, as while it was
	// held (racyNote): the value frozen is itself chance there.
	frozenInInitial bool
}

// isBlocked reports whether the handler is in a call, held by the scenario.
func (h *handler) isBlocked() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.blocked
}

func newHandler(name string, resync time.Duration, slow bool, rec *trace.Recorder) *handler {
	h := &handler{name: name, resync: resync, rec: rec, view: map[string]string{}}
	if slow {
		h.gate = make(chan struct{})
	}
	return h
}

func (h *handler) layer() string { return trace.HandlerLayer(h.name) }

// call is the event of a call to the handler about obj.
func (h *handler) call(op string, obj any, detail string) trace.Event {
	e := trace.ObjectEvent(h.layer(), trace.KindCall, op, obj, detail)
	e.Handler = h.name
	return e
}

// The marks on handler lines that come in map order on some side: adds
// of an initial list (a watch-list's, or a late handler's catch-up from
// the indexer), and updates that carry no change (a resync, or a relist's
// unchanged objects).
const (
	initialListMark = " (initial list)"
	sameObjectMark  = trace.SameObjectMark
	newObjectMark   = trace.NewObjectMark // deleted and created again unseen
)

// uidOf is obj's metadata.uid ("" without metadata).
func uidOf(obj any) string {
	m, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	return string(m.GetUID())
}

// rvOf is obj's metadata.resourceVersion ("" without metadata).
func rvOf(obj any) string {
	m, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	return m.GetResourceVersion()
}

// OnAdd records the call, then waits if the handler is slow.
func (h *handler) OnAdd(obj any, isInInitialList bool) {
	e := h.call("OnAdd", obj, trace.Describe(obj))
	if isInInitialList {
		e.Detail += initialListMark
		e.Order = trace.OrderInitialList
	}
	h.called(e, isInInitialList, func() {
		k := trace.KeyOf(obj)
		if _, ok := h.view[k]; ok {
			h.anomalies = append(h.anomalies, "OnAdd for "+k+", which the handler already had")
		}
		h.view[k] = trace.Describe(obj)
	})
}

// OnUpdate records the call, then waits if the handler is slow.
func (h *handler) OnUpdate(oldObj, newObj any) {
	e := h.call("OnUpdate", newObj, trace.Describe(oldObj)+" -> "+trace.Describe(newObj))
	e.PrevRV = trace.RVOf(oldObj)
	switch {
	case uidOf(oldObj) != uidOf(newObj): // even at the same name@rv: after an etcd restore or wipe, numbers are reused
		e.Detail += newObjectMark
	case trace.Describe(oldObj) == trace.Describe(newObj):
		e.Detail += sameObjectMark
		e.Order = trace.OrderSameObject
	}
	h.called(e, false, func() {
		k := trace.KeyOf(newObj)
		if _, ok := h.view[k]; !ok {
			h.anomalies = append(h.anomalies, "OnUpdate for "+k+", which the handler did not have")
		}
		h.view[k] = trace.Describe(newObj)
	})
}

// OnDelete records the call, then waits if the handler is slow.
func (h *handler) OnDelete(obj any) {
	h.called(h.call("OnDelete", obj, trace.Describe(obj)), false, func() {
		k := trace.KeyOf(obj)
		if _, ok := h.view[k]; !ok {
			h.anomalies = append(h.anomalies, "OnDelete for "+k+", which the handler did not have")
		}
		delete(h.view, k)
	})
}

// called records a call. The line is recorded under the same lock as the
// count, so whoever sees the count sees the line.
//
// A slow handler held in an initial-list call is the exception: which of
// the initial list's objects reaches it first is map order (a watch-list's
// temporary store, or the indexer a late handler catches up from), so the
// line says only that it is held, and names the object once released,
// in the initial-list batch with the rest of the list (trace.OrderInitialList).
func (h *handler) called(e trace.Event, initial bool, apply func()) {
	h.mu.Lock()
	if h.frozen {
		h.mu.Unlock()
		return
	}
	gate := h.gate
	heldInitial := gate != nil && initial
	if heldInitial {
		h.rec.Record(trace.Event{Layer: h.layer(), Kind: trace.KindHandler, Handler: h.name,
			Detail: "OnAdd    (held: slow) in its first initial-list call; the object is named on release (with several, which comes first is map order)"})
		h.heldInitial = true
	} else {
		h.rec.Record(e)
	}
	h.calls++
	apply()
	if gate != nil {
		h.blocked = true
	}
	h.mu.Unlock()
	if gate == nil {
		return
	}
	<-gate
	h.mu.Lock()
	h.blocked = false
	h.mu.Unlock()
	if heldInitial {
		h.mu.Lock()
		if h.frozen { // let go by a stop: nothing after it is shown
			h.heldInitial = false
			h.mu.Unlock()
			return
		}
		if h.removed { // set before the release that let this call go
			h.rec.Record(trace.Event{Layer: h.layer(), Kind: trace.KindHandler, Handler: h.name, Detail: "the held initial-list call returns: the handler was removed"})
		} else {
			h.rec.Record(e) // in the initial-list batch: which one was held is map order too
		}
		h.heldInitial = false
		h.mu.Unlock()
	}
}

// heldInInitialList reports whether the handler is held in an
// initial-list call, or released from one and not yet past its line.
func (h *handler) heldInInitialList() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.heldInitial
}

// syncedHidden reports whether the handler's HasSynced is hidden in the
// classic stack: it is held in an initial-list call, or was frozen in one.
func (h *handler) syncedHidden() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.heldInitial || h.frozenInInitial
}

// letGo lets a held (slow) handler go for good, as the informers stop:
// its held call returns, and no call from now on is recorded or counted
// (frozen). A handler that is not held is left as it is: a late call it
// gets before the informer stops is one Session.Finish must see. letGo
// reports whether the handler was held.
func (h *handler) letGo() (wasHeld bool) {
	synced := h.reg != nil && h.reg.HasSynced()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.gate == nil {
		return false
	}
	h.frozen, h.syncedAtStop, h.frozenInInitial = true, synced, h.heldInitial
	close(h.gate)
	h.gate = nil
	return true
}

// hasSynced is the registration's HasSynced, or for a frozen handler
// the value it had when frozen.
func (h *handler) hasSynced() bool {
	h.mu.Lock()
	frozen, synced := h.frozen, h.syncedAtStop
	h.mu.Unlock()
	if frozen {
		return synced
	}
	return h.reg.HasSynced()
}

// heldBack reports whether the handler's view may lag the indexer by
// design: it is slow, or was let go by a stop.
func (h *handler) heldBack() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.gate != nil || h.frozen
}

// release lets a slow handler's waiting and future calls through.
func (h *handler) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.gate != nil {
		close(h.gate)
		h.gate = nil
	}
}

func (h *handler) slow() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.gate != nil
}

func (h *handler) callCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.calls
}

// anomaliesAndView returns the anomalies since the last call, and what
// differs between the handler's view (what its calls built) and the
// indexer, in differences' words; "" where they agree, or where the view
// is not compared (compareView false).
func (h *handler) anomaliesAndView(indexer map[string]string, compareView bool) ([]string, string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	a := h.anomalies
	h.anomalies = nil
	if !compareView {
		return a, ""
	}
	return a, h.viewChecked.differences("the indexer", indexer, "the view", h.view, h.calls)
}
