package sim

import (
	"context"
	"fmt"
	"maps"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/cachelab/cachelab/informer"
	"github.com/cachelab/cachelab/internal/meter"
	"github.com/cachelab/cachelab/internal/scenarioclock"
	"github.com/cachelab/cachelab/listwatch"
	"github.com/cachelab/cachelab/sim/trace"
	"github.com/cachelab/cachelab/sim/world"
)

// startConfig is what a scenario's start command asked for.
type startConfig struct {
	res       listwatch.Resource // what it lists and watches
	stack     informer.Stack
	resync    time.Duration
	labels    string
	fields    string
	namespace string // "" for all namespaces
	transform string // "" or "strip-managed-fields"
	queue     bool   // the queue world (start-queue): a reflector and a bare queue
}

// matches reports whether obj is in the informers' namespace and passes
// their selectors (nil never does).
func (c *startConfig) matches(obj *unstructured.Unstructured) bool {
	if obj == nil || obj.GroupVersionKind() != c.res.GroupVersionKind() {
		return false
	}
	ls, err := labels.Parse(c.labels)
	if err != nil {
		return false
	}
	fs, err := fields.ParseSelector(c.fields)
	if err != nil {
		return false
	}
	return (c.namespace == "" || obj.GetNamespace() == c.namespace) && ls.Matches(labels.Set(obj.GetLabels())) &&
		fs.Matches(fields.Set{"metadata.name": obj.GetName(), "metadata.namespace": obj.GetNamespace()})
}

// side is one implementation's informer with its connection, handlers and
// trace recorder. The two kinds differ only in how they build and read
// their informer; everything the runner compares is recorded by code they
// share (the connection, handlers, transform).
type side struct {
	id   string // its goroutines' label (parked.go), unique in the process
	impl string
	user string // whom its requests come from, on the wire and on a cluster (userOf)
	rec  *trace.Recorder
	conn *world.Conn
	// target is the resource its connection serves, shared with its
	// peer: start sets it before the informer's first request.
	target *listwatch.Resource
	clock  *scenarioclock.Clock
	ticks  *tickClock // cachelab's view of the clock, which tracks resync ticks

	handlers []*handler   // in the order added, removed ones included
	ctls     []*ctlSide   // the controllers on this side's informer (start-controller), in the order started
	enqueued int          // transform calls: objects that entered the queue
	peer     *side        // the other implementation's side of the same informer
	client   int          // the index in etcdWorld.clients of the etcd connection its requests use
	cfg      *startConfig // what the informer was made with; nil before start (or a factory's informer)
	// fac is the factory that made the informer (factories.go), or nil
	// for start's.
	fac *simFactory
	// unseenWrite is set when the newest write is one the informer's
	// selectors filter out: no event will tell it etcd's revision, so
	// settling asks etcd for a progress notification (a bookmark) on its
	// connection. It stays set until both sides of the informer have
	// reached etcd's revision, if need be after a disconnect, a failed
	// request or a stop. (Each informer's own: a bookmark asked for on
	// one informer's connection is not another's to get.)
	unseenWrite bool
	// clusterRV, on a cluster, is the resourceVersion of the newest write
	// in the informer's scope: settled, the informer has reached it.
	// clusterGone is the key of an object that write removed: settled,
	// the informer's store no longer holds it (the DELETED event came),
	// whatever resourceVersion the deletion had.
	clusterRV, clusterGone string
	// running is set once the informer runs: start ran it, or its
	// factory's Start did. It stays set after a stop, which sets halted.
	running, halted bool
	// crashed is set when the data consistency detector's panic stopped
	// the informer (detector.go), on its reflector's goroutine.
	crashed atomic.Bool

	inf informerOps // nil before start
	// plant, of a planted bug (Options.Plant), stands between cachelab's
	// informer and each handler.
	plant func(informer.ResourceEventHandler) informer.ResourceEventHandler
	// plantWatch, of a planted bug, rewrites each WATCH cachelab's
	// reflector sends.
	plantWatch func(metav1.ListOptions) metav1.ListOptions
	// meter hears the running informer's metrics (show metrics); its
	// name is released when the informer stops.
	meter       *meter.Meter
	releaseName func()

	runCtx  context.Context // the informer runs until it ends
	cancel  context.CancelFunc
	stopped <-chan struct{} // closed by cancel
	// jitter, shared by both sides' running informers, gives client-go's
	// re-watch backoffs cachelab's draws.
	jitter *backoffJitter
	// realWait hears each relist backoff cachelab's reflector starts
	// (Options.OnRealWait), or is nil.
	realWait func(time.Duration)
	done     sync.WaitGroup
	mu       sync.Mutex // guards enqueued

	// What the previous step ended with, to report what a step changed.
	lastIndexer map[string]string // key -> rv
	// view reads the indexer at the cost of what changed in it, and says
	// which keys changed since the last step's lines (noteChanges).
	view *indexView
	// etcdChecked remembers etcd's content and the indexer the invariants
	// last found equal.
	etcdChecked equalOnce
	// ticksDrained is how many resync ticks client-go's side had handled
	// when its queue was last found drained (poppedAfterTick).
	ticksDrained int
	lastSynced   map[string]bool // "informer" or handler name -> HasSynced
	racyShown    map[string]bool // handlers whose HasSynced is hidden (racyNote), as last shown
	classic      bool            // the informer runs the classic stack
}

// informerOps is what the runner does with an informer. The cachelab and
// client-go adapters below implement it.
type informerOps interface {
	addHandler(h *handler) error
	removeHandler(h *handler) error
	run(ctx context.Context)
	hasSynced() bool
	// hasStarted is HasStarted: Run has begun (P24).
	hasStarted() bool
	lastSyncRV() string
	indexer() (objs []any, rv string)
	// backlog is cachelab's work in flight; ok is false for client-go,
	// whose queue and listeners cannot be seen from outside.
	backlog() (b informer.Backlog, ok bool)
}

func (s *side) handlerNamed(name string) *handler {
	for _, h := range s.handlers {
		if h.name == name && !h.removed {
			return h
		}
	}
	return nil
}

// addHandler adds h to the informer, as the side's: a handler added to a
// running informer starts its goroutines there and then.
func (s *side) addHandler(h *handler) (err error) {
	s.do(func() { err = s.inf.addHandler(h) })
	return err
}

// start builds and runs the informer with every handler added so far.
func (s *side) start(cfg startConfig, seed uint64) error {
	if err := s.build(cfg, seed); err != nil {
		return err
	}
	ctx := s.runCtx
	s.running = true
	// Made inside do, the goroutine carries the side's label from its
	// first instruction: a dump taken before it has run sees it as the
	// side's, and not yet parked.
	s.do(func() { s.done.Go(func() { s.inf.run(ctx) }) })
	return nil
}

// build makes the informer, with every handler added so far, and the
// context it is to run in; start runs it, or its factory's Start does.
func (s *side) build(cfg startConfig, seed uint64) error {
	s.classic = cfg.stack == informer.Classic
	s.cfg = &cfg
	transform := func(obj any) (any, error) {
		s.mu.Lock()
		s.rec.Record(trace.ObjectEvent(trace.LayerTransform, trace.KindEnqueue, "", obj, trace.Describe(obj))) // with the count: see handler.called
		s.enqueued++
		s.mu.Unlock()
		if cfg.transform == "strip-managed-fields" {
			if u, ok := obj.(*unstructured.Unstructured); ok {
				u = u.DeepCopy()
				u.SetManagedFields(nil)
				return u, nil
			}
		}
		return obj, nil
	}
	// The run's context exists before the informer: client-go's clock
	// ends its waits when it is cancelled (stopClock).
	ctx, cancel := context.WithCancel(context.Background())
	s.runCtx, s.cancel, s.stopped = ctx, cancel, ctx.Done()
	s.meter = meter.New()
	var err error
	switch {
	case cfg.queue && s.impl == trace.Cachelab:
		s.inf = newCachelabQueueWorld(s, cfg, seed, transform)
	case cfg.queue:
		s.inf = newClientGoQueueWorld(s, cfg, transform)
	case s.impl == trace.Cachelab:
		s.inf, err = newCachelabInformer(s, cfg, seed, transform)
	default:
		s.inf, err = newClientGoInformer(s, cfg, transform)
	}
	if err != nil {
		return err
	}
	for _, h := range s.handlers {
		if !h.removed {
			if err := s.addHandler(h); err != nil {
				return err
			}
		}
	}
	return nil
}

// fresh readies the side for new informers after a stop: the handlers
// registered before the stop start again with no calls and empty views
// (fresh registrations on fresh informers), and what the next step
// changed is measured from nothing.
func (s *side) fresh() {
	var hs []*handler
	for _, h := range s.handlers {
		if !h.removed {
			hs = append(hs, newHandler(h.name, h.resync, false, s.rec))
		}
	}
	s.handlers, s.inf, s.cancel, s.running, s.halted = hs, nil, nil, false, false
	s.crashed.Store(false)
	s.mu.Lock()
	s.enqueued = 0
	s.mu.Unlock()
	s.lastIndexer, s.lastSynced = map[string]string{}, map[string]bool{}
	s.view.reset()
}

// stop ends the informer and lets every held handler go, so no goroutine
// outlives the run; it returns the names of those it let go (whose calls
// from then on are not shown: handler.letGo).
func (s *side) stop() (held []string) {
	s.halted = true
	for _, h := range s.handlers {
		if h.letGo() && !h.removed {
			held = append(held, h.name)
		}
	}
	if s.cancel != nil {
		s.cancel()
	}
	s.done.Wait()
	if s.fac != nil {
		s.fac.shutdown(s.impl) // waits for the goroutine its Start ran the informer on
	}
	if s.releaseName != nil {
		s.releaseName()
		s.releaseName = nil
	}
	// client-go may leave a LIST running when it stops (its reflector
	// lists in a goroutine and stops waiting for it); its last line
	// belongs to the stop, on both sides. A disconnect stays: it is the
	// world's, and informers started again wait at it.
	if s.conn != nil {
		s.conn.Quiesce()
	}
	return held
}

// snapshot is one side's observable state after a settled step.
type snapshot struct {
	Indexer    map[string]string // key -> rv
	StoreRV    string
	LastSyncRV string
	Synced     map[string]bool // "informer" and each handler's name
	Calls      map[string]int  // each handler's number of calls ("pops" in the queue world)
	Enqueued   int             // objects that entered the queue
	// HeldInitial names the handlers held in an initial-list call. In the
	// classic stack their HasSynced is left out of Synced: see racyNote.
	HeldInitial map[string]bool
}

// equal reports whether two snapshots are the same: cmp.Equal's answer,
// without reflection, for the hundred thousand entries of a large
// indexer. (Every map a snapshot has is made, never nil.)
func (a snapshot) equal(b snapshot) bool {
	return a.sameCounters(b) && a.StoreRV == b.StoreRV && maps.Equal(a.Indexer, b.Indexer)
}

// sameCounters reports whether two snapshots agree on everything but the
// indexer (counters).
func (a snapshot) sameCounters(b snapshot) bool {
	return a.LastSyncRV == b.LastSyncRV && a.Enqueued == b.Enqueued && maps.Equal(a.Synced, b.Synced) &&
		maps.Equal(a.Calls, b.Calls) && maps.Equal(a.HeldInitial, b.HeldInitial)
}

// racyNote explains why, in the classic stack, a registration's HasSynced
// is not shown while its handler is held in an initial-list call.
const racyNote = "classic stack: while a handler is held in an initial-list call, its registration's HasSynced is " +
	"neither shown nor compared. client-go v0.37.2's DeltaFIFO marks the list synced when it pops the last item, " +
	"before it hands that item to process, so a registration can report HasSynced=true before its handler has " +
	"even been given its last initial add (a race in client-go that cachelab's classic stack shares)"

// snapshot is the side's state: its counters, and every object in its
// indexer.
func (s *side) snapshot() snapshot { return s.read(true) }

// polled is the side's state as settling reads it while it waits:
// snapshot's, but trusting that an object the indexer still holds was
// not changed in place since it was last read (indexView.read).
func (s *side) polled() snapshot { return s.read(false) }

func (s *side) read(check bool) snapshot {
	sn := s.counters()
	if s.inf == nil {
		sn.Indexer = map[string]string{}
		s.view.reset()
	} else {
		objs, rv := s.inf.indexer()
		sn.Indexer, sn.StoreRV = s.view.read(objs, check), rv
	}
	return sn
}

// counters is the side's state without the indexer's objects (Indexer is
// nil, StoreRV empty): what costs the same at any number of objects, for
// settling to poll.
func (s *side) counters() snapshot {
	sn := snapshot{Synced: map[string]bool{}, Calls: map[string]int{}, HeldInitial: map[string]bool{}}
	if s.inf != nil {
		sn.LastSyncRV = s.inf.lastSyncRV()
		sn.Synced["informer"] = s.inf.hasSynced()
		if q, ok := s.inf.(interface{ popCount() int }); ok {
			sn.Calls["pops"] = q.popCount()
		}
	}
	s.mu.Lock()
	sn.Enqueued = s.enqueued
	s.mu.Unlock()
	for _, c := range s.ctls {
		sn.Calls[c.handlerName()] = c.held.calledTimes()
	}
	for _, h := range s.handlers {
		if h.removed {
			continue
		}
		sn.Calls[h.name] = h.callCount()
		if h.syncedHidden() {
			sn.HeldInitial[h.name] = true
			if s.classic {
				continue
			}
		}
		if h.reg != nil {
			sn.Synced[h.name] = h.hasSynced()
		}
	}
	return sn
}

// noteChanges records what the step changed in the indexer and in
// HasSynced, as trace lines.
func (s *side) noteChanges(sn snapshot) {
	// What changed, sorted: a step that touched one object sorts one
	// key. sn is the view's latest read, and lastIndexer the read the
	// view's changes are counted from.
	changed, all := s.view.takeChanges()
	var keys []string
	if all {
		for k, v := range sn.Indexer {
			if old, ok := s.lastIndexer[k]; !ok || old != v {
				keys = append(keys, k)
			}
		}
		for k := range s.lastIndexer {
			if _, ok := sn.Indexer[k]; !ok {
				keys = append(keys, k)
			}
		}
	} else {
		for k := range changed {
			if v, ok := sn.Indexer[k]; v != s.lastIndexer[k] || ok != hasKey(s.lastIndexer, k) {
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		v, now := sn.Indexer[k]
		switch old, before := s.lastIndexer[k]; {
		case !before:
			s.rec.Record(indexerEvent("add", k, "", v, v))
		case !now:
			s.rec.Record(indexerEvent("delete", k, old, "", old))
		case old != v:
			s.rec.Record(indexerEvent("update", k, old, v, old+" -> "+v))
		}
	}
	for _, n := range syncedNames(sn) {
		if v := sn.Synced[n]; v != s.lastSynced[n] {
			what := "handler " + n
			if n == "informer" {
				what = "informer"
			}
			s.rec.Add(trace.LayerSynced, trace.KindSynced, "", fmt.Sprintf("%s HasSynced=%t", what, v))
		}
	}
	var racy []string
	for n := range sn.HeldInitial {
		if _, shown := sn.Synced[n]; !shown {
			racy = append(racy, n)
		}
	}
	sort.Strings(racy)
	shown := s.racyShown
	s.racyShown = map[string]bool{}
	for _, n := range racy {
		if !shown[n] {
			s.rec.Add(trace.LayerSynced, trace.KindSynced, "", "handler "+n+" HasSynced not shown: its handler is held in an initial-list call (see the note)")
			s.rec.Add(trace.LayerNote, trace.KindNote, "", racyNote)
		}
		s.racyShown[n] = true
	}
	s.lastIndexer, s.lastSynced = sn.Indexer, sn.Synced
}

func hasKey(m map[string]string, k string) bool {
	_, ok := m[k]
	return ok
}

// syncedNames lists a snapshot's HasSynced entries: the informer first,
// then the handlers by name.
func syncedNames(sn snapshot) []string {
	names := make([]string, 0, len(sn.Synced))
	for n := range sn.Synced {
		if n != "informer" {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	if _, ok := sn.Synced["informer"]; ok {
		names = append([]string{"informer"}, names...)
	}
	return names
}

// indexerEvent is one key's change in the indexer over a step: before
// and after as name@rv ("" for none).
func indexerEvent(op, key, before, after, detail string) trace.Event {
	return trace.Event{Layer: trace.LayerIndexer, Kind: trace.KindStore, Op: op, Key: key,
		PrevRV: rvPart(before), RV: rvPart(after), Detail: detail}
}

// rvPart is the resourceVersion in a "ns/name@rv" description.
func rvPart(described string) string {
	if i := strings.LastIndexByte(described, '@'); i >= 0 {
		return described[i+1:]
	}
	return ""
}
