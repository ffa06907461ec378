package mermaid

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/cachelab/cachelab/sim/trace"
)

// What crosses between etcd, kube-apiserver and a reflector. Each line
// between kube-apiserver and a reflector names the watch it is about
// (w1, w2...), or says it is a LIST's: a step often holds two watches'
// lines, the end of one (a 410 on the watch that was waiting for the
// connection) after the request of the next, and without its name a
// line reads as the nearest request's.

// named is text about watch, or about a LIST when watch is "", starting
// with its name (once).
func named(watch, text string) string {
	if watch == "" {
		watch = "LIST"
	}
	if text == watch || strings.HasPrefix(text, watch+" ") || strings.HasPrefix(text, watch+":") {
		return text
	}
	return watch + " " + text
}

// request is a LIST or WATCH going out, or its answer coming back:
// dashed, and crossed when the server refused it (a 4xx or 5xx status).
func (ev events) request(e trace.Event) line {
	l := line{layer: e.Layer, key: e.Key}
	if e.Op != "answer" {
		l.text = arrow(ev.at("refl", e), "->>", "api", named(e.Watch, firstFields(e.Detail, 3)))
		return l
	}
	answer := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(e.Detail), "->"))
	l.fault = isErrorStatus(answer)
	if l.fault {
		answer = strings.TrimSuffix(firstFields(answer, 2), ":")
	}
	l.text = arrow("api", arrowFor(l.fault, true), ev.at("refl", e), mark(l.fault)+named(e.Watch, "→ "+clip(answer, 80)))
	return l
}

// wire is one HTTP try of a request (--server apiserver), from its typed
// fields: the method and status, without the URL the request's own line
// says in words, the try's number past the first, and Retry-After;
// crossed for a 4xx or 5xx status, a try that got none, or an ERROR that
// came inside a 200 stream.
func (ev events) wire(e trace.Event) line {
	l := line{layer: e.Layer, key: e.Key}
	var what string
	switch {
	case e.Op == "ERROR":
		what, l.fault = "ERROR inside the 200 stream", true
	case e.Status == 0:
		what, l.fault = e.Op+" failed", true
	default:
		what, l.fault = fmt.Sprintf("%s %d %s", e.Op, e.Status, http.StatusText(e.Status)), e.Status >= 400
	}
	if e.Try > 1 {
		what = fmt.Sprintf("try %d: %s", e.Try, what)
	}
	if e.RetryAfter != "" {
		what += " (Retry-After: " + e.RetryAfter + ")"
	}
	l.text = arrow("api", arrowFor(l.fault, true), ev.at("refl", e), mark(l.fault)+named(e.Watch, "HTTP "+clip(what, 80)))
	return l
}

// isErrorStatus reports whether s starts with a 4xx or 5xx status code.
func isErrorStatus(s string) bool {
	code, _, _ := strings.Cut(s, " ")
	return len(code) == 3 && (code[0] == '4' || code[0] == '5') && strings.Trim(code, "0123456789") == ""
}

// write is a write to etcd. Behind the watch cache, kube-apiserver hears
// it at once through the cache's own watch on etcd: an arrow from etcd,
// where the events its watches hand on come from. A held cache hears it
// only when released, and without the cache kube-apiserver reads etcd
// for each request: a note over etcd.
func (ev events) write(e trace.Event) string {
	label := writeLabel(e)
	switch {
	case !ev.cached:
		return note("etcd", label)
	case ev.cache.held:
		ev.cache.waiting = append(ev.cache.waiting, label)
		return note("etcd", label+" (the watch cache is held: it hears this when released)")
	}
	return arrow("etcd", "->>", "api", label)
}

// world is anything else the world did: a note over where it happened.
// Holding the watch cache and releasing it change what the cache hears;
// a release is an arrow from etcd with the writes the cache catches up
// with.
func (ev events) world(e trace.Event, fault bool) string {
	if e.Layer == trace.LayerCache && ev.cached {
		switch {
		case strings.Contains(e.Detail, "watch cache held"):
			ev.cache.held = true
		case strings.Contains(e.Detail, "watch cache released"):
			ev.cache.held = false
			text := clip(e.Detail, 80) + caughtUp(ev.cache.waiting)
			ev.cache.waiting = nil
			return arrow("etcd", "->>", "api", mark(fault)+text)
		}
	}
	return note(worldOver(e.Layer, ev.last), mark(fault)+clip(e.Detail, 120))
}

// caughtUp names the writes a released cache hears, the first few.
func caughtUp(writes []string) string {
	const most = 5
	if len(writes) == 0 {
		return ""
	}
	s := ": " + strings.Join(writes[:min(len(writes), most)], ", ")
	if len(writes) > most {
		s += fmt.Sprintf(", … %d more", len(writes)-most)
	}
	return s
}

// showLines is how many of a show command's lines its note draws.
const showLines = 12

// show draws a show command's lines (a step's show layer) as one note,
// over the participant it shows: the indexer's store, the reflector's
// requests, the queue, a controller's workqueue; the whole informer for
// the rest.
func (ev events) show(cmd string, shown []trace.Event) line {
	e := shown[0]
	what := strings.Fields(cmd)
	over := ev.at("refl", e) + "," + ev.last
	if len(what) > 1 {
		switch what[1] {
		case "store", "synced":
			over = ev.at("idx", e)
		case "requests":
			over = ev.at("refl", e)
		case "queue":
			over = ev.at("queue", e)
		}
	}
	texts := []string{escape(clip(cmd, 80))}
	for i, s := range shown {
		if i == showLines {
			texts = append(texts, fmt.Sprintf("… %d more lines", len(shown)-showLines))
			break
		}
		texts = append(texts, escape(clip(strings.Join(strings.Fields(s.Detail), " "), 100)))
	}
	return line{layer: trace.LayerShow, shape: trace.Shape(e),
		text: fmt.Sprintf("Note over %s: %s", over, strings.Join(texts, "<br/>"))}
}
