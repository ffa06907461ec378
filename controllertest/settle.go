package controllertest

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/cachelab/cachelab/kubeapiserver"

	"github.com/cachelab/cachelab/internal/goroutines"
)

// Settling: knowing when a controller the world did not write is done.
//
// The world is settled when nothing in it will happen until the clock
// moves or someone writes:
//
//   - every watch cache has taken in etcd's revision, and has no event on
//     its way to a watcher (apistorage's Quiescent);
//   - no request is in the server (its request log's Pending), and no
//     byte is on the world's network (memnet's Pending);
//   - no work queue given QueueMetrics holds a key or has one being
//     reconciled;
//   - every goroutine of the server's connections and of the controller
//     (those Run started, and all they started) is parked: waiting for a
//     channel, a condition or the network, none running, runnable, in a
//     system call or asleep (testing/synctest's "durably blocked", read
//     from a stack dump taken with the world stopped);
//   - and none of them waits for the wall clock in a way the world knows
//     of (realWait);
//   - with Options.Outside, a controller in another process is settled
//     as the kernel sees it (outside.go).
//
// The last two are why a settle needs no quiet period: a goroutine
// parked on a channel is not woken by time passing, and one that will be
// (a timer of the wall clock) is either known here and waited for, or is
// one of the waits the package documentation says the world cannot see.
// Nothing is read twice apart in time to conclude that nothing happens;
// what is on its way is counted.

// users are the server's clients whose requests a settle waits for.
var users = []string{ControllerUser, StoryUser, GCUser}

// Settle waits until the world is settled (above), handing the
// controller the events its watches have to send one at a time, and
// settling after each. It fails if the controller returned, if nothing
// moves for Options.SettleTimeout, or if a wait on the wall clock lasts
// longer than Options.RealWait.
//
// One at a time: the server holds every event of the controller's
// watches (kubeapiserver's Gate) and lets one go only when the world
// has settled, the one at the lowest resourceVersion first. Without
// that, an event of one watch (a child's) and one of another (its
// parent's) would reach the controller at once, and which it handled
// first would be the scheduler's choice: a verdict that changes from run
// to run. With it, a run is one interleaving, the same every time:
// every event the controller sees has been answered (its reconcile
// done, its writes' events held in turn) before the next.
func (w *World) Settle(ctx context.Context) error {
	for {
		if err := w.settleOnce(ctx); err != nil {
			return err
		}
		// Counted before the event goes: once it has, the controller
		// may answer it with requests before this goroutine runs again
		// (a loaded machine's scheduler put the event after them).
		before := len(w.server.Requests(""))
		e, ok := w.gate.Next()
		if !ok {
			return nil
		}
		w.mu.Lock()
		w.events = append(w.events, delivered{e, before})
		w.mu.Unlock()
	}
}

// delivered is an event the controller was handed, and how many
// requests (of every user) the server had taken by then.
type delivered struct {
	kubeapiserver.Released
	after int
}

// settleOnce waits until the world is settled but for the events the
// gate holds.
func (w *World) settleOnce(ctx context.Context) error {
	timeout, realMax := w.opts.settleTimeout(), w.opts.realWait()
	type progress struct {
		why          string
		moved, taken int64
		requests     int
	}
	var seen progress
	deadline := time.Now().Add(timeout)
	var realSince time.Time
	// A stack dump is the costly look (each stops the world and walks
	// every goroutine of the process), so it is taken only once the
	// cheap counts have stood still for a poll, and the polls between
	// dumps that find the world busy grow longer, up to 16 ms.
	var last progress
	look := time.Millisecond
	for {
		if err := w.stopped(); err != nil {
			return err
		}
		now := progress{"", w.net.Moved(), w.queues.taken(), w.requests()}
		dump := now == last
		last = now
		why, wait, err := w.unsettled(ctx, dump)
		if err != nil {
			return err
		}
		if why == "" || w.gate.Held() > 0 && w.letGo(wait) {
			return nil
		}
		now.why = why
		if now != seen {
			seen, deadline = now, time.Now().Add(timeout)
		}
		switch {
		case wait == none:
			realSince = time.Time{}
		case wait == connecting:
			realSince, deadline = time.Time{}, time.Now().Add(timeout) // bounded by Outside.Connect
		case realSince.IsZero():
			realSince = time.Now()
		case time.Since(realSince) > realMax:
			return fmt.Errorf("controllertest: the world did not settle: for more than %v %s waited on the wall clock, which the world cannot move; give the controller the world's clock (World.Clock) where it takes one", realMax, why)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("controllertest: the world did not settle: nothing moved for %v while it waited for %s", timeout, why)
		}
		poll := time.Millisecond
		switch {
		case wait == shortTimer || wait == retryTimer:
			poll = 5 * time.Millisecond // client-go's first requeue after an error waits 5 ms
		case wait != none:
			poll = 50 * time.Millisecond // a wait of the wall clock lasts 0.1 to 1.6 s
		case dump:
			poll, look = look, min(2*look, 16*time.Millisecond)
		}
		select {
		case <-time.After(poll):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// requests is how many requests the server has taken from every user.
func (w *World) requests() int {
	n := 0
	for _, u := range users {
		n += len(w.server.Requests(u))
	}
	return n
}

// unsettled says what the world is waiting for, "" if nothing, and
// whether that is a wait of the wall clock. Without dump it looks at the
// counts alone, and says the world is waiting for its goroutines.
func (w *World) unsettled(ctx context.Context, dump bool) (why string, wait waitKind, err error) {
	rev, err := w.etcd.Revision(ctx)
	if err != nil {
		return "", none, fmt.Errorf("controllertest: etcd's revision: %w", err)
	}
	for _, st := range w.storages {
		if st.Cached() && !st.CacheCaughtUp(uint64(rev)) {
			// A cache hears of a revision another resource's write
			// made only from a progress notification: ask for one, as
			// etcd would send one unasked after a while.
			if err := st.RequestProgress(ctx); err != nil {
				return "", none, err
			}
			return fmt.Sprintf("the watch cache of %s to take in etcd's revision %d", st.Resource().Resource, rev), none, nil
		}
	}
	moved := w.net.Moved()
	if p := w.net.Pending(); p > 0 {
		return fmt.Sprintf("%d bytes on their way between the server and its clients", p), none, nil
	}
	for _, u := range users {
		if n := w.server.Pending(u); n > 0 {
			return fmt.Sprintf("%d requests of %s in the server", n, u), none, nil
		}
	}
	if !dump {
		return "the controller and the server, still moving", none, nil
	}
	// The goroutines before the queues: a controller that has keys
	// queued but polls for its caches to sync (its workers not yet
	// started) waits for events the gate holds, not for its queue.
	if why, wait = w.goroutinesUnparked(); why != "" {
		return why, wait, nil
	}
	if busy := w.queues.busy(); len(busy) > 0 {
		return busy[0], none, nil
	}
	if w.outside != nil {
		if why, wait, err = w.outsideUnsettled(); why != "" || err != nil {
			return why, wait, err
		}
	}
	if w.net.Moved() != moved {
		return "the network, which moved while the world looked", none, nil
	}
	return "", none, nil
}

// goroutinesUnparked looks at the world's and the controller's
// goroutines in one dump. A goroutine that is not parked comes first; a
// wait of the wall clock that ends by itself (a backoff) before one
// that polls.
func (w *World) goroutinesUnparked() (why string, wait waitKind) {
	goroutines.ShowLabels()
	var world []string
	var pollWhy string
	var pollKind waitKind
	for _, g := range goroutines.All() {
		switch {
		case goroutines.Label(g, worldLabel) == w.id:
			world = append(world, g)
		case goroutines.Label(g, controllerLabel) == w.id:
			if what, kind := realWait(g); kind == backingOff {
				why, wait = fmt.Sprintf("goroutine %s of the controller (%s)", goroutines.ID(g), what), backingOff
			} else if kind == polling {
				// The first poll says why, unless a WaitForCacheSync
				// does, which letGo tells apart.
				if syncPoll := strings.Contains(g, waitForCacheSync); syncPoll {
					pollWhy, pollKind = fmt.Sprintf("goroutine %s of the controller (client-go's WaitForCacheSync, which looks every 100 ms on the wall clock)", goroutines.ID(g)), syncing
				} else if pollWhy == "" {
					pollWhy, pollKind = fmt.Sprintf("goroutine %s of the controller (%s)", goroutines.ID(g), what), polling
				}
			} else if st := goroutines.State(g); kind == none && !goroutines.Parked(st) {
				return fmt.Sprintf("goroutine %s of the controller, %s in %s", goroutines.ID(g), st, innermost(g)), none
			}
		}
	}
	for _, st := range w.storages {
		if !st.QuiescentIn(world) {
			return fmt.Sprintf("the watch cache of %s, which has an event on its way", st.Resource().Resource), none
		}
	}
	for _, g := range world {
		if st := goroutines.State(g); !goroutines.Parked(st) {
			return fmt.Sprintf("goroutine %s of the server, %s in %s", goroutines.ID(g), st, innermost(g)), none
		}
	}
	if wait == backingOff {
		return why, wait
	}
	if pollWhy != "" {
		return pollWhy, pollKind
	}
	return "", none
}

// waitKind is what a goroutine of the controller waits for.
type waitKind int

const (
	none       waitKind = iota // nothing of the wall clock's
	backingOff                 // a time of the wall clock, which will pass
	polling                    // a condition, looked at again on the wall clock's ticks
	syncing                    // the same, WaitForCacheSync's
	shortTimer                 // a timer of another process's, due within Outside.Horizon
	retryTimer                 // the same, within four times the horizon, after a retry (outside.go)
	connecting                 // a controller in another process, to connect (Attach)
)

// realWaits are the places a controller's goroutine, parked there, waits
// for the wall clock: client-go's and apimachinery's own timers, which
// no clock given to them reaches. A goroutine parked with one of these
// as its innermost frame (not counting the runtime's) will go on of
// itself. Waits on timers of the controller's own code are not known
// here (the package documentation).
//
// A backoff ends by itself, and the world waits for every one to end
// before it lets the next event go: after a disconnect each reflector
// backs off for a time client-go draws at random (0.8 to 1.6 s), and
// letting events go in between would make which informer relisted
// first part of the run. A poll (package wait's, cache.WaitForCacheSync's
// every 100 ms) looks at a condition that may wait for one of those
// events, and does not hold them back.
var realWaits = []struct {
	frame, what string
	kind        waitKind
}{
	{"k8s.io/client-go/tools/cache.(*Reflector).watch(", "client-go's reflector, backing off before it watches again", backingOff},
	{"k8s.io/client-go/tools/cache.(*Reflector).watchList(", "client-go's reflector, backing off before it lists again", backingOff},
	{"golang.org/x/time/rate.(*Limiter)", "a client's rate limiter", backingOff},
	{"k8s.io/client-go/util/flowcontrol.", "a client's rate limiter", backingOff},
	{"k8s.io/apimachinery/pkg/util/wait.", "a wait or poll of package wait", polling},
}

// waitForCacheSync marks a goroutine that polls for informers' caches
// to sync (client-go's, and controller-runtime's through it).
const waitForCacheSync = "k8s.io/client-go/tools/cache.WaitForCacheSync("

// letGo says whether, the world being settled but for wait, the gate
// lets its next event go rather than wait for wait to end:
//
//   - a poll may be waiting for an event the gate holds: let it go;
//   - but a WaitForCacheSync waits for no event once every watch of the
//     controller has sent its initial events (Gate.Listing): its
//     condition holds, and its next tick starts the workers. The world
//     waits for that tick, as for a backoff. An event let go before it
//     would reach the controller before or after its workers started,
//     as the machine's load would have it (a handler that wrote as the
//     controller started, fooctl's MistakenSweep, made two reconciles
//     or one);
//   - a retry's timer (outside.go).
func (w *World) letGo(wait waitKind) bool {
	switch wait {
	case polling, retryTimer:
		return true
	case syncing:
		return w.gate.Listing() > 0
	}
	return false
}

// reflectorRun marks a reflector's goroutine: parked in package wait, it
// is in its relist backoff.
const reflectorRun = "k8s.io/client-go/tools/cache.(*Reflector).Run"

// realWait says which wait of the wall clock g is in, if any.
func realWait(g string) (string, waitKind) {
	if goroutines.State(g) == "sleep" {
		return "time.Sleep in " + innermost(g), backingOff
	}
	f := innermost(g)
	for _, r := range realWaits {
		if !strings.HasPrefix(f, r.frame) {
			continue
		}
		if r.kind == polling && strings.Contains(g, reflectorRun) {
			return "client-go's reflector, backing off before it lists again", backingOff
		}
		return r.what, r.kind
	}
	return "", none
}

// innermost is g's innermost function that is not the runtime's (nor
// the select or channel machinery's): where its own code is.
func innermost(g string) string {
	lines := strings.Split(g, "\n")
	for _, l := range lines[1:] {
		if l == "" || strings.HasPrefix(l, "\t") || strings.HasPrefix(l, "created by ") {
			continue
		}
		if strings.HasPrefix(l, "runtime.") || strings.HasPrefix(l, "internal/") || strings.HasPrefix(l, "time.Sleep") {
			continue
		}
		return l
	}
	return "?"
}
