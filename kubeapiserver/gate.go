package kubeapiserver

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// A Gate holds every event the server's watches of some users are about
// to send, until its owner lets one go. A world that settles between
// events uses it to hand a controller its events one at a time, in one
// order: without it, two watches (a parent's resource and a child's)
// deliver at once, and which event the controller handles first is the
// scheduler's choice, different from run to run.
//
// Next lets go the event a cluster would most plausibly send first: of
// the first event each watch holds, the one at the lowest
// resourceVersion (a watch's own events keep their order). On a tie (two
// watches' bookmarks at one revision) it goes by what the watches watch
// (resource, then namespace), then by which opened first: not by the
// order alone, which after a disconnect is the order in which client-go's
// reflectors ended their backoffs, drawn at random. An event with no
// resourceVersion (an error) goes before any with one.
//
// Two watches of one user that watch the same thing (two informers of
// one resource in one controller) tie on everything the server sees: the
// same request, on the same connection (client-go shares one transport
// between clients of one config). Which of them opened first is then the
// draw of client-go's backoffs, and which informer each serves the gate
// cannot tell. A controller whose work depends on which of its two
// informers hears of an event first can end differently from run to run.
type Gate struct {
	users []string

	mu    sync.Mutex
	held  []*heldEvent // in the order they came
	watch int64        // watches numbered as they open
	// listing are the open watches that send their initial events
	// (sendInitialEvents) and have not yet sent the bookmark that ends
	// them.
	listing map[int64]bool
}

// heldEvent is an event a relay is waiting to send.
type heldEvent struct {
	watch int64
	what  string // what the watch watches
	rv    uint64
	go_   chan struct{}
	about Released
	// listed: the bookmark that ends the watch's initial events.
	listed bool
}

// Released is an event the gate let go, as a trace shows it.
type Released struct {
	Type     string // ADDED, MODIFIED, DELETED, BOOKMARK, ERROR
	Resource string // what the watch watches: its resource (and group)
	Key      string // the object's namespace/name, an error's code and reason, "" for a bookmark
	RV       string // its resourceVersion
}

func (r Released) String() string {
	s := r.Type + " " + r.Resource
	if r.Key != "" {
		s += " " + r.Key
	}
	if r.RV != "" {
		s += " rv " + r.RV
	}
	return s
}

// NewGate is a gate for the watches of users.
func NewGate(users ...string) *Gate { return &Gate{users: users} }

// holds reports whether the gate holds user's events.
func (g *Gate) holds(user string) bool { return g != nil && slices.Contains(g.users, user) }

// number is the next watch's number; initial says it sends its initial
// events first.
func (g *Gate) number(initial bool) int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.watch++
	if initial {
		if g.listing == nil {
			g.listing = map[int64]bool{}
		}
		g.listing[g.watch] = true
	}
	return g.watch
}

// ended forgets watch number, which has ended.
func (g *Gate) ended(number int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.listing, number)
}

// Listing is how many of the open watches are still sending their
// initial events: none has let go the bookmark that ends them
// (metav1.InitialEventsAnnotationKey). A WaitForCacheSync waits for no
// other event.
func (g *Gate) Listing() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.listing)
}

// hold puts watch's event e in the gate; the channel is closed when Next
// lets it go.
func (g *Gate) hold(number int64, what string, e watch.Event) *heldEvent {
	resource, _, _ := strings.Cut(what, "/")
	h := &heldEvent{watch: number, what: what, go_: make(chan struct{}), about: Released{Type: string(e.Type), Resource: resource}}
	if m, err := meta.Accessor(e.Object); err == nil && e.Type == watch.Bookmark {
		h.listed = m.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true"
	}
	if st, ok := e.Object.(*metav1.Status); ok {
		h.about.Key = fmt.Sprintf("%d %s", st.Code, st.Reason) // what the error says, in place of a key
	}
	if m, err := meta.Accessor(e.Object); err == nil && e.Type != watch.Error {
		h.rv, _ = strconv.ParseUint(m.GetResourceVersion(), 10, 64)
		h.about.RV = m.GetResourceVersion()
		if e.Type != watch.Bookmark {
			h.about.Key = m.GetName()
			if ns := m.GetNamespace(); ns != "" {
				h.about.Key = ns + "/" + h.about.Key
			}
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.held = append(g.held, h)
	return h
}

// drop takes an event out of the gate unsent: its watch has ended.
func (g *Gate) drop(h *heldEvent) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.held = slices.DeleteFunc(g.held, func(x *heldEvent) bool { return x == h })
}

// Held is how many events the gate holds.
func (g *Gate) Held() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.held)
}

// Next lets one event go (above): which, and whether there was one.
func (g *Gate) Next() (Released, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	best := -1
	seen := map[int64]bool{}
	for i, h := range g.held {
		if seen[h.watch] {
			continue // not its watch's first
		}
		seen[h.watch] = true
		if best < 0 || before(h, g.held[best]) {
			best = i
		}
	}
	if best < 0 {
		return Released{}, false
	}
	h := g.held[best]
	if h.listed {
		delete(g.listing, h.watch)
	}
	close(h.go_)
	g.held = slices.Delete(g.held, best, best+1)
	return h.about, true
}

// before reports whether Next lets a go before b.
func before(a, b *heldEvent) bool {
	if a.rv != b.rv {
		return a.rv < b.rv
	}
	if a.what != b.what {
		return a.what < b.what
	}
	return a.watch < b.watch
}
