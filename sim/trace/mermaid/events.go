package mermaid

import (
	"fmt"
	"strings"

	"github.com/cachelab/cachelab/sim/trace"
)

// events turns trace events into diagram lines.
type events struct {
	handlers map[string]string // handler name -> participant id
	last     string
	// informers and controllers give each informer of a run with several
	// (trace.Event.Informer) its own reflector, queue and indexer, and
	// each named controller its own workqueue and worker: a suffix for
	// their participant ids ("" for start's informer, an unnamed
	// controller).
	informers   map[string]string
	controllers map[string]string
	// cached: kube-apiserver serves from its watch cache, which hears
	// every write through its own watch on etcd (every world but etcd's).
	cached bool
	// cache is what the diagram knows of the watch cache as it draws the
	// steps in order: whether it is held, and the writes it has not heard.
	cache *cacheState
}

// cacheState is the watch cache as the steps so far left it: held by
// hold-cache, the writes waiting for release-cache.
type cacheState struct {
	held    bool
	waiting []string // the held writes' labels, in order
}

// at is participant id (refl, queue, idx, wq, worker) as e's informer or
// controller has it.
func (ev events) at(id string, e trace.Event) string {
	switch id {
	case "wq", "worker":
		if e.Kind == trace.KindWorkqueue || e.Kind == trace.KindReconcile {
			return id + ev.controllers[e.Handler]
		}
		return id
	}
	return id + ev.informers[e.Informer]
}

// line is e's statement in the diagram, and false for an event that is
// not drawn (the show, queue and log layers).
func (ev events) line(e trace.Event) (line, bool) {
	l := line{layer: e.Layer, key: e.Key}
	switch e.Kind {
	case trace.KindWrite:
		l.text = ev.write(e)
	case trace.KindWorld:
		l.fault = isFault(e.Detail)
		l.text = ev.world(e, l.fault)
	case trace.KindRequest:
		l = ev.request(e)
	case trace.KindWire:
		l = ev.wire(e)
	case trace.KindEvent:
		l.fault = e.Op == "ERROR"
		l.text = arrow("api", arrowFor(l.fault, false), ev.at("refl", e), mark(l.fault)+named(e.Watch, watchLabel(e)))
	case trace.KindWatchEnd:
		l.fault = true
		l.text = arrow("api", "--x", ev.at("refl", e), mark(true)+named(e.Watch, clip(e.Detail, 120)))
	case trace.KindReflector:
		l.text = note(ev.at("refl", e), clip(e.Detail, 100))
	case trace.KindEnqueue:
		l.text = arrow(ev.at("refl", e), "->>", ev.at("queue", e), objectLabel(e, ""))
	case trace.KindPop:
		l.text = arrow(ev.at("queue", e), "->>", ev.at("idx", e), objectLabel(e, e.Op))
	case trace.KindSkip:
		l.text = note(ev.at("queue", e), clip(e.Detail, 100))
	case trace.KindStore:
		l.text = note(ev.at("idx", e), clip(e.Op+" "+e.Detail, 100))
	case trace.KindCall:
		l.text = arrow(ev.at("idx", e), "->>", ev.handlers[e.Handler], callLabel(e))
	case trace.KindHandler:
		l.text = note(ev.handlers[strings.TrimPrefix(e.Layer, trace.LayerHandler+"/")], clip(e.Detail, 100))
	case trace.KindSynced:
		l.text = note(ev.syncedOver(e), e.Detail)
	case trace.KindNote:
		l.text = note(ev.at("refl", e)+","+ev.last, clip(e.Detail, 160))
	case trace.KindWorkqueue:
		l.text = ev.workqueueLine(e)
	case trace.KindReconcile:
		l.text = note(ev.at("worker", e), clip(e.Op+" "+e.Detail, 120))
	case trace.KindQueue: // what cachelab's queue holds
		l.text = note(ev.at("queue", e), clip(e.Detail, 100))
	case trace.KindLog: // what the informer logged about a handler
		l.text = note(ev.at("idx", e), clip(e.Detail, 100))
	default: // show: a step's show lines are one note (step)
		return line{}, false
	}
	if l.text == "" {
		return line{}, false // about a handler that is not a participant
	}
	l.arrow = !strings.HasPrefix(l.text, "Note ")
	return l, true
}

func (ev events) syncedOver(e trace.Event) string {
	if name, ok := strings.CutPrefix(e.Detail, "handler "); ok {
		name, _, _ = strings.Cut(name, " ")
		if id := ev.handlers[name]; id != "" {
			return id
		}
	}
	return ev.at("idx", e)
}

// faults are the world's events a diagram shades: the starts of the
// troubles the issue names (a disconnect, a compaction, an etcd restart or
// member loss, a server closing watches, a held or restarted watch cache,
// an injected failure). World events carry their meaning in words only,
// so this reads their words.
var faults = []string{"connection lost", "compact:", "etcd restarted", "etcd restored", "etcd member", "etcd wiped",
	"the server closes", "watch cache held", "kube-apiserver restarted", "the next WATCH will fail", "will fail with",
	"will have expired", "informers stopped"}

func isFault(detail string) bool {
	for _, f := range faults {
		if strings.Contains(detail, f) {
			return true
		}
	}
	return false
}

func mark(fault bool) string {
	if fault {
		return "⚠ "
	}
	return ""
}

func worldOver(layer, last string) string {
	switch layer {
	case trace.LayerEtcd:
		return "etcd"
	case trace.LayerCache:
		return "api"
	}
	return "etcd," + last // the simulator's levers: the connection, the clock
}

func arrowFor(fault, reply bool) string {
	switch {
	case fault && reply:
		return "--x"
	case fault:
		return "-x"
	case reply:
		return "-->>"
	}
	return "->>"
}

// writeLabel is a write as the text trace says it, but an update's
// labels: a delete's line names the revision of the delete, which the
// watch's DELETED event carries.
func writeLabel(e trace.Event) string {
	if e.Key == "" || e.RV == "" || e.Op == "delete" {
		return clip(e.Detail, 100)
	}
	return e.Op + " " + writtenResource(e) + e.Key + "@" + e.RV
}

// writtenResource is the resource a write's line names after its verb
// ("create configmaps ns0/cfg@3"), and a space; "" for a pod's, whose
// line names none ("create ns0/a@2").
func writtenResource(e trace.Event) string {
	_, rest, _ := strings.Cut(e.Detail, " ")
	word, _, _ := strings.Cut(rest, " ")
	if word == "" || word == "pods" || strings.ContainsAny(word, "/@") {
		return ""
	}
	return word + " "
}

func watchLabel(e trace.Event) string {
	if e.Key == "" {
		return clip(e.Detail, 80) // a bookmark, an ERROR
	}
	s := e.Key + "@" + e.RV + " " + e.Op
	if e.Initial {
		s += " (initial)"
	}
	return s
}

// objectLabel is key@rv and the operation, or the event's detail for a
// delta about several objects (a relist's ReplacedAll, coalesced deltas).
func objectLabel(e trace.Event, op string) string {
	if op == "" || e.Key == "" || e.RV == "" || strings.Contains(e.Detail, ": ") {
		return clip(strings.TrimSpace(op+" "+e.Detail), 100)
	}
	return strings.TrimSpace(e.Key + "@" + e.RV + " " + op)
}

func callLabel(e trace.Event) string {
	if e.Key == "" || e.RV == "" {
		return clip(e.Op+" "+e.Detail, 100)
	}
	s := e.Key + "@" + e.RV + " " + e.Op
	if e.PrevRV != "" && e.PrevRV != e.RV {
		s += " (was @" + e.PrevRV + ")"
	}
	if strings.Contains(e.Detail, "(initial list)") {
		s += " (initial list)"
	}
	return s
}

func firstFields(s string, n int) string {
	f := strings.Fields(s)
	if len(f) > n {
		f = f[:n]
	}
	return strings.Join(f, " ")
}

func note(over, text string) string {
	if over == "" || strings.HasSuffix(over, ",") {
		return ""
	}
	return fmt.Sprintf("Note over %s: %s", over, escape(strings.Join(strings.Fields(text), " ")))
}

func arrow(from, kind, to, text string) string {
	if from == "" || to == "" {
		return ""
	}
	return fmt.Sprintf("%s%s%s: %s", from, kind, to, escape(text))
}

// clip cuts s to at most n runes, marking the cut with "…".
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// escape makes s safe as a message's or a note's text: Mermaid ends a
// statement at ";" and a line, reads "#...;" as an entity and "%%" as a
// comment, and GitHub's sanitizer reads "<" as a tag. Each becomes an
// entity code, which Mermaid turns back into the character. Other
// control characters (a session's names may hold ESC) are escaped as the
// text trace escapes them (trace.Escape).
var escaper = strings.NewReplacer("#", "#35;", ";", "#59;", "<", "#lt;", "%", "#37;", "\n", " ", "\r", " ")

func escape(s string) string { return trace.Escape(escaper.Replace(s)) }

// workqueueLine draws a controller's queue operation: keys come from the
// informer's handler into the queue, go to a worker, and come back.
func (ev events) workqueueLine(e trace.Event) string {
	idx, wq, worker := ev.at("idx", e), ev.at("wq", e), ev.at("worker", e)
	switch e.Op {
	case "add":
		return arrow(idx, "->>", wq, clip(e.Detail, 80))
	case "coalesce":
		return arrow(idx, "-->>", wq, clip(e.Key+" coalesced", 80))
	case "get":
		return arrow(wq, "->>", worker, "get "+e.Key)
	case "drop":
		return note(wq, clip(e.Detail, 80))
	}
	return arrow(worker, "->>", wq, clip(e.Op+" "+e.Detail, 80))
}
