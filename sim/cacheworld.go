package sim

import (
	"fmt"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/cachelab/cachelab/internal/goroutines"
	"github.com/cachelab/cachelab/listwatch"
	"github.com/cachelab/cachelab/sim/trace"
	"github.com/cachelab/cachelab/sim/world"
)

// cacheWorld is kube-apiserver's watch cache in front of etcd, in
// process (--server watchcache): the informers' requests are served by
// kube-apiserver's storage with its cacher (package apistorage, through
// sim/full), one for each resource the scenario names, and the
// scenario's writes go to etcd underneath, as etcdWorld's do. After
// add-apiserver it has several kube-apiservers over the same etcd, and
// the informers talk to one of them (use-apiserver).
type cacheWorld struct {
	*etcdWorld
	apis  []*kubeAPIServer // several after add-apiserver
	using int              // the index in apis of the one the informers talk to
	// served is told of each kube-apiserver started, to serve it over
	// HTTPS in the world that does (httpsWorld).
	served func(api *kubeAPIServer) error
	// quietAt is when the caches were last seen quiescent within the
	// settle in progress (quiescent); quietDump is the goroutine dump
	// that found them so (quietMoment).
	quietAt   *activity
	quietDump []string
}

// cachedWorld is a world with kube-apiserver's watch cache of the run's
// own: the part the cache's levers act on.
type cachedWorld interface{ caches() *cacheWorld }

func (w *cacheWorld) caches() *cacheWorld { return w }

func newCacheWorld(r *runner) *cacheWorld {
	return &cacheWorld{etcdWorld: &etcdWorld{r: r}, served: func(*kubeAPIServer) error { return nil }}
}

// connect starts etcd, then one kube-apiserver with its watch cache that
// serves both informers, as one serves every controller of a cluster.
func (w *cacheWorld) connect() error {
	if err := w.open(); err != nil {
		return err
	}
	if _, err := w.start(w.clients[3], ""); err != nil {
		return err
	}
	return w.r.startPair()
}

// start starts a kube-apiserver's storage, with its watch cache, over
// client for every resource the scenario writes or watches, named name
// if not "".
func (w *cacheWorld) start(client *clientv3.Client, name string) (*kubeAPIServer, error) {
	r := w.r
	var api *kubeAPIServer
	var err error
	r.asWorld(func() {
		api, err = newKubeAPIServer(resourcesOf(r.sc), func(res string) (world.APIServer, error) {
			return r.full.NewAPIServer(r.ctx, client, r.resourceNamed(res), r.worldClock(), name)
		})
	})
	if err != nil {
		return nil, err
	}
	w.apis = append(w.apis, api)
	return api, w.served(api)
}

// server is the storage of the kube-apiserver the informers talk to when
// the side makes a request: use-apiserver moves them.
func (w *cacheWorld) server(label string, res *listwatch.Resource, i int, impl, user string, rec *trace.Recorder) (func(ns string) world.Server, int, error) {
	name := w.named(res)
	return func(ns string) world.Server { return w.apis[w.using].of(name).ListerWatcher(ns) }, i + 1, nil
}

// reached: from the watch cache, a filtered write sends nothing, and the
// cache sends bookmarks of its own when the clock moves: a side has had
// all once the cache has taken in rev and has nothing in flight
// (apistorage's Quiescent).
func (w *cacheWorld) reached(s *side, rev int64) bool {
	return w.caughtUp(rev) && w.quiescent() && s.conn.Delivered()
}

// stalled reports whether every call the side has in progress waits in
// the watch cache for it to catch up, which only the clock or the cache
// catching up ends (apistorage's Waiting). Only the side's own requests
// count: those its goroutines' label marks (parked.go; in process the
// storage call runs on a goroutine its reflector started, and over the
// wire kube-apiserver's handler puts the side's label on the goroutine
// that serves it). Another side's request that waits says nothing of
// this side's, which may still be on its way: in the client, on the
// wire, or in kube-apiserver's filters. Counted together, a CI run under
// load found client-go settled with its watch-list still in
// kube-apiserver's handler; it reached the cache a second of the clock
// late, and its 504 came a step after cachelab's.
func (w *cacheWorld) stalled(s *side, c world.State) bool {
	if c.Calls == 0 {
		return false
	}
	goroutines.ShowLabels()
	var mine []string
	for _, g := range goroutines.All() {
		if goroutines.Label(g, sideLabel) == s.id {
			mine = append(mine, g)
		}
	}
	return w.r.full.Waiting(mine, w.storages()...) == c.Calls
}

// caughtUp reports whether every kube-apiserver's cache has taken in
// etcd's revision rev (or is held back from it).
func (w *cacheWorld) caughtUp(rev int64) bool {
	caught := true
	for _, a := range w.apis {
		if !a.CacheCaughtUp(uint64(max(rev, 0))) {
			a.catchUp(w.r.ctx, uint64(max(rev, 0)))
			caught = false
		}
	}
	return caught
}

// storages are every kube-apiserver's storage of every resource.
func (w *cacheWorld) storages() []world.APIServer {
	var out []world.APIServer
	for _, a := range w.apis {
		out = append(out, a.members()...)
	}
	return out
}

// states says how far each cache has got, for messages.
func (w *cacheWorld) states() string {
	var out []string
	for i, a := range w.apis {
		out = append(out, fmt.Sprintf("of apiserver-%d %s", i+1, a.CacheState()))
	}
	return strings.Join(out, "; ")
}

// settling starts a settle: a yes of quiescent is not kept from the last.
func (w *cacheWorld) settling() { w.quietAt, w.quietDump = nil, nil }

// quiescent reports whether no kube-apiserver's cache has anything in
// flight. Only a stack dump can tell (apistorage's Quiescent), at about
// half a millisecond each, and a settle asks several times; a long
// advance settles thousands of times. So within one settle a yes is kept
// (quietAt) until something could have woken the cache: the clock moved,
// or either side's connection did anything (a request, an event handed
// over, a watch opened or ended), which changes its state or adds a trace
// line. Nothing else reaches the cache while a settle waits: writes to
// etcd come before it, and each settle starts without a kept yes.
func (w *cacheWorld) quiescent() bool {
	r := w.r
	key := r.cacheActivity()
	if w.quietAt != nil && *w.quietAt == key {
		return true
	}
	w.quietAt, w.quietDump = nil, nil
	goroutines.ShowLabels()
	all := goroutines.All()
	mine := r.ofThisRun(all)
	for _, a := range w.apis {
		if !a.QuiescentIn(mine) {
			return false
		}
	}
	w.quietAt, w.quietDump = &key, all
	return true
}

// quietMoment is the dump that found the caches quiescent, if nothing the
// runner can see has changed since it was taken (cacheActivity): what it
// shows of the sides' goroutines is how they are now, as far as any
// dump can say, and untilParked need not take another. It is given out
// once: a goroutine it shows busy has gone on since, and the next look
// takes a dump of its own.
func (w *cacheWorld) quietMoment() []string {
	d := w.quietDump
	w.quietDump = nil
	if w.quietAt == nil || *w.quietAt != w.r.cacheActivity() {
		return nil
	}
	return d
}

// settleWorld waits until the cache has taken in etcd's revision (or is
// held back from it) and has nothing in flight, informers or not: what a
// request the next step makes gets from the cache must not depend on how
// fast the cacher was. Nothing in flight matters after every move of the
// clock, not only while informers watch: a move fires the cacher's
// bookmark timer, and a watch the next step opens is due its first
// bookmark a tick earlier or later depending on whether the cacher's
// dispatcher handled that tick before the watch registered (fuzz seed
// 299: "advance 45s", then "start").
func (w *cacheWorld) settleWorld() error {
	r := w.r
	rev, err := r.revision()
	if err != nil {
		return err
	}
	// Bounded, like every wait, by time without progress: a large
	// world's events take the cacher a while to take in and hand on.
	type progress struct {
		caches string
		a      activity
	}
	seen := progress{w.states(), r.cacheActivity()}
	deadline := time.Now().Add(r.opts.SettleTimeout)
	for !w.caughtUp(rev) || !w.quiescent() {
		if now := (progress{w.states(), r.cacheActivity()}); now != seen {
			seen, deadline = now, time.Now().Add(r.opts.SettleTimeout)
		}
		if time.Now().After(deadline) {
			waiting := fmt.Sprintf("the cache to take in etcd's rv %d (the feed %s)", rev, w.states())
			if w.caughtUp(rev) {
				waiting = fmt.Sprintf("the cacher to hand on what it has (it has taken in etcd's rv %d; one of its goroutines is not parked yet)", rev)
			}
			return fmt.Errorf("kube-apiserver's watch cache made no progress for %v while it settled; if the machine is busy, try a longer --settle-timeout.\nIt was waiting for: %s", r.opts.SettleTimeout, waiting)
		}
		select {
		case <-time.After(time.Millisecond):
		case <-r.ctx.Done():
			return r.ctx.Err()
		}
	}
	return nil
}

// clocked: the caches send bookmarks on the clock.
func (w *cacheWorld) clocked() bool { return true }

// asksProgress: the sides watch the cache, not etcd; the cache's own
// watch of etcd is kube-apiserver's.
func (w *cacheWorld) asksProgress() bool { return false }

// nextWork is when the first kube-apiserver's cache has work due on the
// clock, if one has: an advance moves the clock no further in one go.
func (w *cacheWorld) nextWork() (next time.Time, ok bool) {
	for _, a := range w.apis {
		if at, due := a.NextWork(); due && (!ok || at.Before(next)) {
			next, ok = at, true
		}
	}
	return next, ok
}

// release lets every cache go at the run's end: a request waiting in the
// watch cache for it to catch up (a consistent read while it is held)
// ends only when the cache's clock passes its 3 s, so time passes.
func (w *cacheWorld) release() {
	for _, a := range w.apis {
		a.ReleaseCache()
	}
	w.r.clock.Step(time.Minute)
}

func (w *cacheWorld) close() {
	for _, a := range w.apis {
		a.Close()
	}
	w.etcdWorld.close()
}
