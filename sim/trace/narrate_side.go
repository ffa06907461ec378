package trace

import (
	"fmt"
	"strings"
)

// sideMemory is what one informer of one side has shown so far, in its
// compared layers: its requests and how they ended, its lists, its
// handlers, its controller's queue.
type sideMemory struct {
	seq     int                 // requests so far: a request's place in time
	watches map[string]*request // by watch id
	list    *request            // the last LIST request (and its pages)
	// listAsked is the step of the last list request (a LIST or a
	// watch-list).
	listAsked int
	// failures are the errors and ends met since the last list that
	// completed, each with its request's place.
	failures []failure
	last     *listing // the last list that completed
	synced   bool     // the informer has reported HasSynced=true
	// handlers are the handlers seen, and whether each first showed
	// after the informer had synced (a late handler).
	handlers map[string]bool
	// deleted counts, per key, DELETED watch events not yet seen
	// applied to the indexer.
	deleted map[string]int
	// heard are the key@rv a watch event brought in this step.
	heard     map[string]bool
	heardStep int
	queue     map[string]*queued // a controller's keys (controller/key)
}

func newSideMemory() *sideMemory {
	return &sideMemory{watches: map[string]*request{}, handlers: map[string]bool{}, deleted: map[string]int{},
		heard: map[string]bool{}, queue: map[string]*queued{}}
}

// request is one LIST or WATCH request.
type request struct {
	seq  int
	id   string // w1, ...; "" for a LIST
	op   string // LIST, WATCH, WATCH-LIST
	rv   string // asked for
	list bool   // a list: a LIST or a watch-list
	// relist: a list made after the informer had synced; cause, what it
	// came after, where the trace shows it (told: cause is known).
	relist bool
	cause  string
	told   bool
	keys   map[string]bool // a watch-list's initial objects
}

// name is how a sentence names the request.
func (r *request) name() string {
	if r.id == "" {
		return "the LIST"
	}
	return r.id
}

// listing is a list that completed: a LIST's last page, or a watch-list's
// end bookmark.
type listing struct {
	step   int
	rv     string
	by     *request
	relist bool
	cause  string
	keys   map[string]bool // the objects it listed
}

// what names the list in a sentence: "the relist w3, after the 410 on
// w2", "the initial LIST".
func (l *listing) what() string {
	s := "the initial list"
	switch {
	case l.relist && l.by.id != "":
		s = "the relist " + l.by.id
	case l.relist:
		s = "the relist's LIST"
	case l.by.id == "":
		s = "the initial LIST"
	}
	if l.cause != "" {
		s += ", " + l.cause + ","
	}
	return s
}

// failure is an error or an end a request met.
type failure struct {
	seq     int    // the request's place
	what    string // "the 410 on w2", "the 500 answer to its LIST", "the end of w1"
	request string // the request's name
	rv      string // what it asked for
	status  int
}

// queued is one key in a controller's workqueue.
type queued struct {
	requeues int // rate-limited requeues since the last forget
	forgot   int // the step of the last forget; 0 if never
	due      int // the step of a requeue or requeue-after still waiting; 0 if none
	dueWhat  string
	added    int // the step of the last add
}

// see takes in one compared event of the side and returns what its
// sentence should add: its cause, or "".
func (m *sideMemory) see(n *Narrator, e Event) string {
	if m.heardStep != n.step {
		m.heard, m.heardStep = map[string]bool{}, n.step
	}
	if strings.HasPrefix(e.Layer, LayerHandler+"/") {
		m.handlerSeen(strings.TrimPrefix(e.Layer, LayerHandler+"/"))
	}
	switch e.Kind {
	case KindRequest:
		m.request(n, e)
	case KindWatchEnd:
		if r := m.watches[e.Watch]; r != nil {
			m.failures = append(m.failures, failure{seq: r.seq, what: "the end of " + r.id, request: r.id, rv: r.rv})
		}
	case KindEvent:
		return m.watchEvent(n, e)
	case KindEnqueue:
		return m.enqueue(n, e)
	case KindStore:
		return m.store(e)
	case KindCall:
		return m.call(n, e)
	case KindSynced:
		switch e.Detail {
		case "informer HasSynced=true":
			m.synced = true
		case "informer HasSynced=false":
			m.synced = false
		}
	case KindWorkqueue:
		return m.workqueue(n, e)
	}
	return ""
}

func (m *sideMemory) handlerSeen(name string) {
	if _, ok := m.handlers[name]; !ok {
		m.handlers[name] = m.synced
	}
}

// request takes in a request line or an answer.
func (m *sideMemory) request(n *Narrator, e Event) {
	switch e.Op {
	case "LIST", "WATCH", "WATCH-LIST":
		if e.Op == "LIST" && strings.Contains(e.Detail, " continue=") && m.list != nil {
			return // the next page of the same list
		}
		m.seq++
		r := &request{seq: m.seq, id: e.Watch, op: e.Op, rv: e.RV, list: e.Op != "WATCH"}
		if r.list {
			r.relist, m.listAsked, r.keys = m.synced, n.step, map[string]bool{}
		}
		if r.id != "" {
			m.watches[r.id] = r
		} else {
			m.list = r
		}
	case "answer":
		r := m.list
		if e.Watch != "" {
			r = m.watches[e.Watch]
		}
		switch {
		case r == nil:
		case e.Status != 0:
			m.failures = append(m.failures, failure{seq: r.seq, what: fmt.Sprintf("the %d answer to %s", e.Status, strings.Replace(r.name(), "the ", "its ", 1)),
				request: r.name(), rv: r.rv, status: e.Status})
		case e.Watch == "" && e.RV != "" && !strings.Contains(e.Detail, MorePagesMark):
			m.complete(n, r, e.RV)
		}
	}
}

// causeOf is what list request r came after: the last error or end a
// request before it met, else the last lever that ended the watches
// since the last list; "" if the trace shows neither. It is worked out
// when a sentence first needs it, not when r is asked for: a step's
// lines come layer by layer, and the watch's 410 that the request came
// after is a line of a later layer than the request's.
func (m *sideMemory) causeOf(n *Narrator, r *request) string {
	if !r.told {
		r.cause, r.told = m.causeBefore(n, r.seq), true
	}
	return r.cause
}

func (m *sideMemory) causeBefore(n *Narrator, seq int) string {
	var best *failure
	for i := range m.failures {
		if f := &m.failures[i]; f.seq < seq && (best == nil || f.seq >= best.seq) {
			best = f
		}
	}
	switch {
	case best != nil:
		return "after " + best.what + n.why(*best)
	case n.world.ended != "" && (m.last == nil || n.world.endedStep >= m.last.step):
		return "after " + n.world.ended
	}
	return ""
}

// complete records that list request r completed at rv.
func (m *sideMemory) complete(n *Narrator, r *request, rv string) {
	m.last = &listing{step: n.step, rv: rv, by: r, relist: r.relist, cause: m.causeOf(n, r), keys: r.keys}
	kept := m.failures[:0]
	for _, f := range m.failures {
		if f.seq > r.seq {
			kept = append(kept, f)
		}
	}
	m.failures = kept
}

// watchEvent takes in an event a watch delivered.
func (m *sideMemory) watchEvent(n *Narrator, e Event) string {
	r := m.watches[e.Watch]
	switch {
	case r == nil:
		return ""
	case e.Op == "ERROR":
		what := "the ERROR on " + r.id // an error that is not an API status, or a trace from before Status
		if e.Status != 0 {
			what = fmt.Sprintf("the %d on %s", e.Status, r.id)
		}
		m.failures = append(m.failures, failure{seq: r.seq, what: what, request: r.id, rv: r.rv, status: e.Status})
		return ""
	case e.Op == "BOOKMARK":
		if r.list && strings.HasSuffix(e.Detail, InitialEventsEndMark) {
			m.complete(n, r, e.RV)
		}
		return ""
	}
	m.heard[e.Key+"@"+e.RV] = true
	if e.Op == "DELETED" {
		m.deleted[e.Key]++
	}
	if e.Initial && r.list {
		r.keys[e.Key] = true
		if r.relist {
			return ": " + r.id + " is the relist" + prefixed(", ", m.causeOf(n, r))
		}
		return ""
	}
	return n.world.late(e, r, n.step) + n.world.selector(e)
}

// enqueue takes in an object entering the queue: one a LIST listed in
// this step says so (a watch-list's say it at their watch event).
func (m *sideMemory) enqueue(n *Narrator, e Event) string {
	l := m.last
	if l == nil || l.step != n.step || l.by.id != "" || m.heard[e.Key+"@"+e.RV] {
		return ""
	}
	l.keys[e.Key] = true
	if l.relist {
		return ", listed by the relist's LIST at rv " + l.rv + prefixed(", ", l.cause)
	}
	return ", listed by the initial LIST at rv " + l.rv
}

// store takes in an indexer change: a delete no DELETED event explains
// is a relist's, which did not list the object.
func (m *sideMemory) store(e Event) string {
	if e.Op != "delete" {
		delete(m.deleted, e.Key)
		return ""
	}
	if m.deleted[e.Key] > 0 {
		m.deleted[e.Key]--
		return ""
	}
	if l := m.last; l != nil && l.relist && !l.keys[e.Key] {
		return fmt.Sprintf(": %s replaced the store, and %s was not in its list at rv %s", l.what(), e.Key, l.rv)
	}
	return ""
}

// prefixed is s after sep, or "" for no s.
func prefixed(sep, s string) string {
	if s == "" {
		return ""
	}
	return sep + s
}
