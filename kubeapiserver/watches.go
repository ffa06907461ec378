package kubeapiserver

import (
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/watch"
)

// What is on the wire. A simulator that waits for a step to settle must
// know when every event the server has sent has reached its client:
// between the storage's watch and the client's decoder an event may be
// in the REST handler, being encoded, or in a TCP buffer. So the server
// counts, per user, the watches it is serving and the events their
// handlers have taken; a client that has received as many through as
// many open watches has nothing on its way.

// WatchCount is what a user's watches have had from the server.
type WatchCount struct {
	Open  int   // watches being served (their handlers have not returned)
	Taken int64 // events those watches' handlers have taken to send
}

// Watches is user's WatchCount.
func (s *Server) Watches(user string) WatchCount {
	s.watches.mu.Lock()
	defer s.watches.mu.Unlock()
	var c WatchCount
	for w := range s.watches.open {
		if w.user == user {
			c.Open++
			c.Taken += w.taken
		}
	}
	return c
}

// OpenWatches is what user's open watches watch (a resource, and a
// namespace if one), one entry per watch, sorted.
func (s *Server) OpenWatches(user string) []string {
	s.watches.mu.Lock()
	defer s.watches.mu.Unlock()
	var out []string
	for w := range s.watches.open {
		if w.user == user {
			out = append(out, w.what)
		}
	}
	slices.Sort(out)
	return out
}

// SilentSince is when the newest of user's open watches that have sent
// no event was opened, on the wall clock; zero if there is none. Such a
// watch, ended within a second of its request, is an error to
// client-go's reflector (a "very short watch", which makes it list
// again), and one ended later is not (it watches again from where it
// was): a world that ends watches waits until then, so that which one
// it is does not follow from how fast the machine ran.
func (s *Server) SilentSince(user string) time.Time {
	s.watches.mu.Lock()
	defer s.watches.mu.Unlock()
	var newest time.Time
	for w := range s.watches.open {
		if w.user == user && w.taken == 0 && w.opened.After(newest) {
			newest = w.opened
		}
	}
	return newest
}

type watches struct {
	mu   sync.Mutex
	open map[*counted]struct{}
	gate *Gate // Options.Gate's, or nil
}

// counted is a storage watch whose events are counted as the REST
// handler takes them.
type counted struct {
	ws    *watches
	user  string
	inner watch.Interface
	end   func()
	out   chan watch.Event
	stop  chan struct{}
	once  sync.Once
	// closing is closed by CloseWatches: the relay closes out, and
	// the handler ends the response.
	closing   chan struct{}
	closeOnce sync.Once
	taken     int64     // guarded by ws.mu
	number    int64     // in the gate, if it holds the user's events
	what      string    // what it watches: a resource/namespace
	opened    time.Time // on the wall clock
}

// relay counts inner's events, and passes them through the gate if it
// holds user's; initial says the watch sends its initial events first
// (sendInitialEvents).
func (ws *watches) relay(user, what string, initial bool, inner watch.Interface, end func()) watch.Interface {
	w := &counted{ws: ws, user: user, what: what, inner: inner, end: end, out: make(chan watch.Event), stop: make(chan struct{}), closing: make(chan struct{}), opened: time.Now()}
	if ws.gate.holds(user) {
		w.number = ws.gate.number(initial)
	}
	ws.mu.Lock()
	if ws.open == nil {
		ws.open = map[*counted]struct{}{}
	}
	ws.open[w] = struct{}{}
	ws.mu.Unlock()
	go w.run()
	return w
}

func (w *counted) ResultChan() <-chan watch.Event { return w.out }

// Stop is called by the handler as it returns: the watch is no longer
// served. An event the relay was handing over is drained.
func (w *counted) Stop() {
	w.once.Do(func() {
		close(w.stop)
		w.ws.mu.Lock()
		delete(w.ws.open, w)
		w.ws.mu.Unlock()
		w.inner.Stop()
		w.end()
		go func() {
			for range w.out {
			}
		}()
	})
}

// run hands the storage's events to the handler. It hands each over with
// a plain send, never in a select: a goroutine dump then tells a relay
// with an event in hand (blocked in a send) from one waiting for the
// next (parked in its select), which apistorage's Quiescent counts on.
// The one exception is an event the gate holds (pass): its relay waits
// in a select, parked, and the gate's owner counts the event instead.
func (w *counted) run() {
	defer close(w.out)
	if w.ws.gate.holds(w.user) {
		defer w.ws.gate.ended(w.number)
	}
	in := w.inner.ResultChan()
	for {
		select {
		case e, ok := <-in:
			if !ok {
				return
			}
			if !w.pass(e) {
				return
			}
			w.out <- e
			w.ws.mu.Lock()
			w.taken++
			w.ws.mu.Unlock()
		case <-w.stop:
			return
		case <-w.closing:
			return
		}
	}
}

// pass waits, if the gate holds the user's events, until it lets e go;
// it reports false if the watch ended first.
func (w *counted) pass(e watch.Event) bool {
	g := w.ws.gate
	if !g.holds(w.user) {
		return true
	}
	h := g.hold(w.number, w.what, e)
	select {
	case <-h.go_:
		return true
	case <-w.stop:
	case <-w.closing:
	}
	g.drop(h)
	return false
}

// CloseWatches ends every watch user has open, as the server ends a watch
// whose timeout has passed: the REST handler sees the storage's watch
// end, and ends the response without an event (H7); the client reads
// the end of its stream. It returns how many it ended.
func (s *Server) CloseWatches(user string) int {
	s.watches.mu.Lock()
	var ws []*counted
	for w := range s.watches.open {
		if w.user == user {
			ws = append(ws, w)
		}
	}
	s.watches.mu.Unlock()
	for _, w := range ws {
		w.closeOnce.Do(func() { close(w.closing) })
	}
	return len(ws)
}
