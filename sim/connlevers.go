package sim

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/cachelab/cachelab/sim/scenario"
	"github.com/cachelab/cachelab/sim/trace"
	"github.com/cachelab/cachelab/sim/world"
)

// The connection's levers: what happens between each informer and the
// server it talks to (world.Conn). Each acts on every informer's
// connection, cachelab's and client-go's alike.
func closeWatch(r *runner, a scenario.Args) error {
	if ok, err := r.armCut(a, false); ok || err != nil {
		return err
	}
	n := 0
	for _, s := range r.sides {
		n = s.conn.CloseWatches()
	}
	r.noteLever(trace.LayerSim, trace.LeverCloseWatch, fmt.Sprintf("the server closes each informer's watch (%d each)", n))
	return nil
}

func disconnect(r *runner, a scenario.Args) error {
	if ok, err := r.armCut(a, true); ok || err != nil {
		return err
	}
	if cs, where := r.cutters(); len(cs) > 0 {
		return r.cutConnections(cs, where)
	}
	for _, s := range r.sides {
		s.conn.Disconnect()
	}
	r.noteLever(trace.LayerSim, trace.LeverDisconnect, "connection lost: watches dropped, new requests wait")
	return nil
}

// cutters are the run's proxies, and what they stand in front of; none
// where the informers do not talk HTTP.
func (r *runner) cutters() ([]cutter, string) { return r.where.cutters() }

// cutConnections is a disconnect where the informers talk HTTP: the
// proxies cut their TCP connections, and each watch ends as its client
// reads the reset. Every connection is held first, so that no informer's
// next request gets through before the others' watches have ended.
func (r *runner) cutConnections(cs []cutter, where string) error {
	ended := make([]func(), 0, len(r.sides))
	for _, s := range r.sides {
		ended = append(ended, s.conn.Unplug())
	}
	n := 0
	for _, c := range cs {
		n += c.Cut()
	}
	for _, wait := range ended {
		wait()
	}
	r.noteLever(trace.LayerSim, trace.LeverDisconnect, "connection lost: watches dropped, new requests wait")
	r.note(trace.LayerWire, "", fmt.Sprintf("the proxy between the informers and %s cut %d TCP %s; each watch ends as its client reads the reset",
		where, n, plural(n, "connection", "connections")))
	return nil
}

func reconnect(r *runner, a scenario.Args) error {
	cs, _ := r.cutters()
	for _, c := range cs {
		c.Restore()
	}
	for _, s := range r.sides {
		s.conn.Reconnect()
	}
	r.noteLever(trace.LayerSim, trace.LeverReconnect, "connection back")
	return nil
}

func failNext(r *runner, a scenario.Args) error {
	page := 0
	if v, ok := a.Value("page"); ok {
		page, _ = strconv.Atoi(v)
	}
	for _, verb := range []string{"list", "watch"} {
		if v, ok := a.Value(verb); ok {
			code, _ := strconv.Atoi(v)
			for _, s := range r.sides {
				s.conn.SetFailNext(verb, code, page*btoi(verb == "list"))
			}
			which := "the next " + strings.ToUpper(verb)
			if verb == "list" && page > 0 {
				which = fmt.Sprintf("page %d of the next paged LIST", page)
			}
			r.note(trace.LayerSim, "", fmt.Sprintf("%s will fail with %d %s", which, code, http.StatusText(code)))
		}
	}
	return nil
}

func expireContinue(r *runner, a scenario.Args) error {
	for _, s := range r.sides {
		s.conn.SetExpireContinue()
	}
	r.note(trace.LayerSim, "", "the next continue token will have expired: its page gets 410, as after a compaction between pages")
	return nil
}

func serverFeature(r *runner, a scenario.Args) error {
	v, _ := a.Value("watch-list")
	on := v == "on"
	for _, s := range r.sides {
		s.conn.Base().SetWatchListFeature(on)
	}
	// Every resource's storage of every kube-apiserver: a kube-apiserver's
	// feature gate is the whole server's, an informer made later included.
	if c := r.caches(); c != nil {
		for _, a := range c.storages() {
			a.ListerWatcher("").SetWatchListFeature(on)
		}
	}
	if on {
		r.note(trace.LayerSim, "", "the server's WatchList feature is on: watches may ask for initial events (watch-list)")
	} else {
		r.note(trace.LayerSim, "", "the server's WatchList feature is off: a watch that asks for initial events is refused (422 Invalid), as by kube-apiserver with its WatchList gate off")
	}
	return nil
}

// armedCut is a fault armed inside the next step (disconnect or
// close-watch with after-events=N, disconnect with after-pages=N).
type armedCut struct {
	step  int  // the step it was armed in, or 0
	drop  bool // disconnect: the connection drops; else (close-watch) the server closes each watch
	n     int  // after how many watch events (or LIST pages) it falls
	pages bool // it falls after page n of a LIST, not after n watch events
}

// Faults inside a step. A lever pulled between steps cannot fall between
// two events of one step: between the second and third of three creates
// a watch relays, or among a watch-list's initial events. With
// after-events=N, disconnect and close-watch are armed instead: each
// informer's connection (world.Conn.CutAfter) counts the watch events it
// hands its informer in the next step, and right after the N-th it ends
// the watches there. Nor can it fall between the pages of a LIST that
// one step makes: with after-pages=N, disconnect is armed to drop each
// informer's connection right after it has answered N pages with more
// to come in that step (world.Conn.CutAfterPages), so the request for
// the next page waits for reconnect with its continue token. Each
// connection counts its own stream, so both implementations are cut at
// the same point. An arming that has not fired by the end of that step
// is taken back, and the step says so.

// armCut arms the cut a's after-events or after-pages asks for, and
// reports whether it did (false: the lever is pulled now, as without
// them).
func (r *runner) armCut(a scenario.Args, drop bool) (bool, error) {
	v, events := a.Value("after-events")
	if !events {
		if v, ok := a.Value("after-pages"); ok {
			return true, r.armPages(v)
		}
		return false, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return true, err
	}
	r.armed.step, r.armed.drop, r.armed.n, r.armed.pages = r.stepN, drop, n, false
	for _, s := range r.sides {
		r.armConn(s.conn)
	}
	what := "the server will close each informer's watch"
	if drop {
		what = "the connection will drop (watches end, new requests wait)"
	}
	r.note(trace.LayerSim, "", fmt.Sprintf("%s inside the next step, right after each informer has taken %s of it", what, scenario.EventsTaken(n)))
	return true, nil
}

// armPages arms a drop between a paged LIST's pages (disconnect
// after-pages=v).
func (r *runner) armPages(v string) error {
	n, err := strconv.Atoi(v)
	if err != nil {
		return err
	}
	r.armed.step, r.armed.drop, r.armed.n, r.armed.pages = r.stepN, true, n, true
	for _, s := range r.sides {
		r.armConn(s.conn)
	}
	r.note(trace.LayerSim, "", fmt.Sprintf("the connection will drop inside the next step, right after each informer has taken %s (the next page's request waits)", scenario.PagesTaken(n)))
	return nil
}

// armConn arms the runner's cut on one connection.
func (r *runner) armConn(c *world.Conn) {
	if r.armed.pages {
		c.CutAfterPages(r.armed.n)
		return
	}
	c.CutAfter(r.armed.n, r.armed.drop)
}

// disarm takes back a cut armed for the step that has just settled,
// where it did not fire: fewer watch events (or LIST pages) came than it
// waited for.
func (r *runner) disarm() {
	unfired := 0
	for _, s := range r.sides {
		if s.conn.Disarm() {
			unfired++
		}
	}
	events := fmt.Sprintf("%d watch %s", r.armed.n, plural(r.armed.n, "event", "events"))
	if r.armed.pages {
		events = fmt.Sprintf("%d LIST %s with more to come", r.armed.n, plural(r.armed.n, "page", "pages"))
	}
	switch {
	case unfired == len(r.sides):
		r.note(trace.LayerSim, "", fmt.Sprintf("no cut: fewer than %s came in this step (the armed fault is taken back)", events))
	case unfired > 0:
		r.note(trace.LayerSim, "", fmt.Sprintf("an informer that took fewer than %s in this step is not cut (the armed fault is taken back there)", events))
	}
	r.armed.step = 0
}
