package controllertest

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/cachelab/cachelab/kubeapiserver"
)

// A run's trace: each command of the placed story, and under it what it
// led to, in the order it happened: the events the controller's watches
// were handed (the gate's), the controller's requests, the garbage
// collector's deletes, and how many keys the controller reconciled. Its
// lines name no time, port or random draw: two runs of one placement
// trace the same bytes.

// runLog is a run's trace as it is played.
type runLog struct {
	w          *World
	lines      []string
	requests   int   // the server's requests already in the trace
	quietFrom  int   // the controller's requests before the quiet period's second half
	quietTaken int64 // keys reconciled before it
	reconciled int64
	events     int      // the world's events already in the trace
	broken     []Broken // Always invariants broken after a command
}

// since is what the controller did and was told since the last step,
// and what the garbage collector deleted: their requests, in the order
// the server took them, and between them the events the controller's
// watches were handed, in the order they came.
func (r *runLog) since() []string {
	reqs := r.w.Requests("")
	r.w.mu.Lock()
	events := r.w.events[r.events:]
	r.events = len(r.w.events)
	r.w.mu.Unlock()
	var lines []string
	for i := r.requests; i <= len(reqs); i++ {
		for len(events) > 0 && events[0].after <= i {
			lines = append(lines, "  event: "+events[0].String())
			events = events[1:]
		}
		if i == len(reqs) {
			break
		}
		switch q := reqs[i]; {
		case q.User == ControllerUser:
			lines = append(lines, "  controller: "+requestLine(q))
		case q.User == GCUser && q.Method != "GET":
			lines = append(lines, "  garbage collector: "+requestLine(q))
		}
	}
	r.requests = len(reqs)
	return sortReads(lines)
}

// brokenYet reports whether the invariant named name broke after a
// command.
func (r *runLog) brokenYet(name string) bool {
	return slices.ContainsFunc(r.broken, func(b Broken) bool { return b.Invariant == name })
}

// step adds a command to the trace, and what it led to: the events the
// controller's watches were handed, its requests, the garbage
// collector's deletes, and how many keys the controller reconciled.
func (r *runLog) step(what string) {
	r.lines = append(r.lines, what)
	r.lines = append(r.lines, r.since()...)
	if n := r.w.queues.taken(); n != r.reconciled {
		r.lines = append(r.lines, "  controller: reconciled "+plural(n-r.reconciled, "key"))
		r.reconciled = n
	}
}

// requestLine is a request as the trace shows it: its URI without the
// parameters that change from run to run (a watch's timeout, which
// client-go draws at random), and an event's name without the wall
// clock's time in it (recorderTime).
func requestLine(q kubeapiserver.Request) string {
	return fmt.Sprintf("%s %s %d", q.Method, shortURI(q.URI), q.Status)
}

func shortURI(uri string) string {
	u, err := url.Parse(uri)
	if err != nil {
		return uri
	}
	v := u.Query()
	for _, k := range []string{"timeout", "timeoutSeconds"} {
		v.Del(k)
	}
	path := recorderTime.ReplaceAllString(u.Path, "$1.<time>")
	if len(v) == 0 {
		return path
	}
	return path + "?" + v.Encode()
}

// recorderTime is the end of an event's name as client-go's event
// recorder makes it (tools/record/util.GenerateEventName): the object's
// name, a dot and the wall clock's time in nanoseconds, in hex.
var recorderTime = regexp.MustCompile(`(/events/[^/]+)\.[0-9a-f]{12,16}$`)

// plural is n things.
func plural(n int64, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// sortReads sorts each run of reads (GETs) among lines: informers send
// their LISTs and WATCHes at once, and the order the server takes them
// in is the scheduler's. A controller's writes, one worker's, keep their
// order.
func sortReads(lines []string) []string {
	isRead := func(l string) bool { return strings.Contains(l, ": GET ") }
	for i := 0; i < len(lines); {
		j := i
		for j < len(lines) && isRead(lines[j]) {
			j++
		}
		slices.Sort(lines[i:j])
		i = max(j, i+1)
	}
	return lines
}
