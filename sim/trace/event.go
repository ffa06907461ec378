package trace

import (
	"fmt"
	"strings"
)

// Event is one thing a run shows: one line of a trace. Its fields are
// typed, so that the comparison, the order rules and every rendering work
// on what happened, not on how it was worded; Text is one rendering.
type Event struct {
	// Layer is where the event happened (the Layer constants), or
	// "handler/<name>" for a handler's calls.
	Layer string `json:"layer"`
	Kind  Kind   `json:"kind"`
	// Key is the object's namespace/name, where the event is about one.
	Key string `json:"key,omitempty"`
	// UID is the object's metadata.uid, where identity matters (a write
	// to etcd, a handler call).
	UID string `json:"uid,omitempty"`
	// RV is the object's resourceVersion (after the change, for an
	// update), PrevRV the one it had before. For a request it is the
	// resourceVersion asked for; for a LIST's answer, the list's.
	RV     string `json:"rv,omitempty"`
	PrevRV string `json:"prevRV,omitempty"`
	// Watch names the watch an event came on, or a WATCH request, each
	// of its answers and each wire try it made ("w1"): "" for a LIST's.
	Watch string `json:"watch,omitempty"`
	// Handler is the handler a call went to.
	Handler string `json:"handler,omitempty"`
	// Op is what happened to the object: a watch event's type (ADDED,
	// MODIFIED, DELETED, BOOKMARK, ERROR), a delta's type (Added,
	// Replaced, Sync, ReplacedAll, ...), a handler call (OnAdd, OnUpdate,
	// OnDelete), an indexer change (add, update, delete), a write
	// (create, update, delete, put-raw, delete-raw), a request (LIST,
	// WATCH, WATCH-LIST, or "answer" for what came back), a wire line's
	// HTTP method (or ERROR, for an error that came inside a watch's
	// stream), or, for the world, the lever that a line reports (Lever*
	// constants; "" for the others).
	Op string `json:"op,omitempty"`
	// Initial marks a watch event that is one of a watch-list's initial
	// events (before its end bookmark).
	Initial bool `json:"initial,omitempty"`
	// Status is an HTTP status: the one a try got (a wire line; for the
	// wire line of an ERROR inside a watch's stream, the stream's), the
	// code of a watch's ERROR event, or of a request's error answer; 0
	// where there is none (a try that failed without one).
	Status int `json:"status,omitempty"`
	// Try is which try of its request a wire line is: 1 for the first,
	// 2 for the first retry, and so on.
	Try int `json:"try,omitempty"`
	// RetryAfter is the Retry-After header a try's response carried, as
	// the server sent it ("1"): a client that tries again waits that
	// many seconds first.
	RetryAfter string `json:"retryAfter,omitempty"`
	// Detail is the rest of the line in words: the object as
	// name@rv with its marks, or what a request asked and got.
	Detail string `json:"detail"`
	// Order is the batch the event belongs to when client-go's order
	// within it is free (map order); "" when its place is fixed.
	Order Order `json:"order,omitempty"`
	// Informer names the informer the event happened in when a run has
	// more than one, as "<factory>/<resource>" (an informer a scenario's
	// factory made); "" for the informer start made, and for the world.
	Informer string `json:"informer,omitempty"`
}

// Kind is the shape of an event: which fields it carries and how it is
// written. The set is closed.
type Kind string

const (
	KindWrite     Kind = "write"     // etcd: one object created, updated or deleted (Op, Key, UID, RV, PrevRV)
	KindWorld     Kind = "world"     // etcd or sim: anything else the world or a lever did
	KindRequest   Kind = "request"   // request: a LIST or WATCH request, or its answer
	KindWire      Kind = "wire"      // wire: one try of an HTTP request (Op: the method; Watch, Try, Status, RetryAfter), or an ERROR inside a watch's 200 stream (Op: ERROR)
	KindEvent     Kind = "event"     // watch: an event on a watch (Watch, Op, Key, RV, Initial)
	KindWatchEnd  Kind = "watch-end" // watch: a watch closed by the server
	KindReflector Kind = "reflector" // reflector: a replace, a resync, a backoff, a watch's end
	KindEnqueue   Kind = "enqueue"   // transform: an object entering the queue (Key, RV)
	KindPop       Kind = "pop"       // pop: a delta taken from the queue (Op, Key, RV)
	KindSkip      Kind = "skip"      // pop: a sync not sent to a handler whose resync is not due
	KindStore     Kind = "store"     // indexer: what a step changed (Op, Key, RV, PrevRV)
	KindCall      Kind = "call"      // handler: a call (Handler, Op, Key, UID, RV, PrevRV)
	KindHandler   Kind = "handler"   // handler: anything else about a handler (held, not added)
	KindSynced    Kind = "synced"    // synced: HasSynced turning
	KindLog       Kind = "log"       // log: a line the informer logged
	KindShow      Kind = "show"      // show: a show command's output
	KindQueue     Kind = "queue"     // queue: what cachelab's queue holds
	KindWorkqueue Kind = "workqueue" // workqueue: one operation on a controller's queue (Op: add, coalesce, get, requeue, after, forget, done; Key)
	KindReconcile Kind = "reconcile" // reconcile: one reconcile and its result, or the guard holding it back (Op: reconcile, stale; Key; the text is the detail)
	KindNote      Kind = "note"      // note: an invariant note or an explanation
)

// Text renders the event as a trace line's text: the operation in a
// column where the kind has one (a call, a pop, an indexer change), the
// watch for a watch event, then the detail.
func (e Event) Text() string {
	if e.Informer != "" {
		return e.Informer + ": " + e.text()
	}
	return e.text()
}

func (e Event) text() string {
	if e.Handler != "" && (e.Kind == KindWorkqueue || e.Kind == KindReconcile) {
		// One of several controllers: its lines carry its name.
		f := e
		f.Handler = ""
		return "controller " + e.Handler + ": " + f.text()
	}
	switch {
	case e.Op == "":
	case e.Kind == KindCall, e.Kind == KindPop, e.Kind == KindWorkqueue:
		return fmt.Sprintf("%-8s %s", e.Op, e.Detail)
	case e.Kind == KindStore:
		return fmt.Sprintf("%-6s %s", e.Op, e.Detail)
	case e.Kind == KindEvent:
		return e.Watch + " " + e.Detail
	}
	return e.Detail
}

// Base is the event's layer without a handler's name.
func (e Event) Base() string {
	base, _, _ := strings.Cut(e.Layer, "/")
	return base
}

// The levers a world line reports (Event.Op of a KindWorld event): the
// ones an object's story names as the cause of what came after them
// (Narrator).
const (
	LeverDisconnect       = "disconnect"        // the connection to the server is lost: watches dropped
	LeverReconnect        = "reconnect"         // the connection is back
	LeverCloseWatch       = "close-watch"       // the server ends each informer's watch
	LeverCompact          = "compact"           // etcd's history before RV is gone
	LeverHoldCache        = "hold-cache"        // a watch cache stops taking in etcd's events
	LeverReleaseCache     = "release-cache"     // and catches up again
	LeverRestartAPIServer = "restart-apiserver" // a kube-apiserver restarts: its watch cache ends every watch
	LeverClock            = "clock"             // the scenario's clock moves
	LeverStop             = "stop"              // the informers stop: the next start makes new ones
	LeverEtcdRestore      = "etcd-restore"      // etcd goes back to a snapshot: its revision from PrevRV to RV
	LeverEtcdWipe         = "etcd-wipe"         // etcd starts again on empty data: its revision from PrevRV to RV
)

// The marks a trace's words carry that stories read: they are written
// where the line is made, and read back here, so that both agree.
const (
	// InitialEventsEndMark ends a watch-list's end bookmark's words.
	InitialEventsEndMark = " (initial events end)"
	// MorePagesMark ends a LIST answer's words when more pages follow.
	MorePagesMark = " (more pages)"
	// SameObjectMark ends an update whose old and new objects are the
	// same: a resync's, or a relist's unchanged object.
	SameObjectMark = " (same object: a resync or relist)"
	// NewObjectMark ends an update whose old and new objects have
	// different UIDs: the object was deleted and created again under
	// the same name while the informer was not watching, and a relist
	// found the new one where the cache held the old.
	NewObjectMark = " (another object: the uid changed, deleted and created again unseen)"
)
