package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sort"
	"sync"
	"time"
	"unsafe"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/cachelab/cachelab/informer"
	"github.com/cachelab/cachelab/reflector"
	"github.com/cachelab/cachelab/store"
)

// The two implementations a scenario runs side by side.
const (
	implCachelab = "cachelab"
	implClientGo = "client-go"
)

// startConfig is what a scenario's start command asked for.
type startConfig struct {
	stack     informer.Stack
	resync    time.Duration
	labels    string
	fields    string
	transform string // "" or "strip-managed-fields"
	queue     bool   // the queue world (start-queue): a reflector and a bare queue
}

// matches reports whether obj passes the informers' selectors (nil never
// does).
func (c *startConfig) matches(obj *unstructured.Unstructured) bool {
	if obj == nil {
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
	return ls.Matches(labels.Set(obj.GetLabels())) &&
		fs.Matches(fields.Set{"metadata.name": obj.GetName(), "metadata.namespace": obj.GetNamespace()})
}

// side is one implementation's informer with its probe, handlers and
// trace recorder. The two kinds differ only in how they build and read
// their informer; everything the runner compares is recorded by code they
// share (probe, handlers, transform).
type side struct {
	impl  string
	rec   *recorder
	probe *probe
	clock *clocktesting.FakeClock
	ticks *tickClock // cachelab's view of the clock, which tracks resync ticks

	handlers []*handler // in the order added, removed ones included
	enqueued int        // transform calls: objects that entered the queue

	inf informerOps // nil before start

	cancel context.CancelFunc
	done   sync.WaitGroup
	mu     sync.Mutex // guards enqueued

	// What the previous step ended with, to report what a step changed.
	lastIndexer map[string]string // key -> rv
	lastSynced  map[string]bool   // "informer" or handler name -> HasSynced
}

// informerOps is what the runner does with an informer. The cachelab and
// client-go adapters below implement it.
type informerOps interface {
	addHandler(h *handler) error
	removeHandler(h *handler) error
	run(ctx context.Context)
	hasSynced() bool
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

// start builds and runs the informer with every handler added so far.
func (s *side) start(cfg startConfig, seed uint64) error {
	transform := func(obj any) (any, error) {
		s.mu.Lock()
		s.enqueued++
		s.mu.Unlock()
		s.rec.add(layerQueue, keyOf(obj), describe(obj))
		if cfg.transform == "strip-managed-fields" {
			if u, ok := obj.(*unstructured.Unstructured); ok {
				u = u.DeepCopy()
				u.SetManagedFields(nil)
				return u, nil
			}
		}
		return obj, nil
	}
	var err error
	switch {
	case cfg.queue && s.impl == implCachelab:
		s.inf = newCachelabQueueWorld(s, cfg, seed, transform)
	case cfg.queue:
		s.inf = newClientGoQueueWorld(s, cfg, transform)
	case s.impl == implCachelab:
		s.inf, err = newCachelabInformer(s, cfg, seed, transform)
	default:
		s.inf, err = newClientGoInformer(s, cfg, transform)
	}
	if err != nil {
		return err
	}
	for _, h := range s.handlers {
		if !h.removed {
			if err := s.inf.addHandler(h); err != nil {
				return err
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	s.done.Go(func() { s.inf.run(ctx) })
	return nil
}

// stop ends the informer and lets every held handler go, so no goroutine
// outlives the run.
func (s *side) stop() {
	for _, h := range s.handlers {
		h.release()
	}
	if s.cancel != nil {
		s.cancel()
	}
	if s.probe != nil {
		s.probe.reconnect()
	}
	s.done.Wait()
}

// snapshot is one side's observable state after a settled step.
type snapshot struct {
	Indexer    map[string]string // key -> rv
	StoreRV    string
	LastSyncRV string
	Synced     map[string]bool // "informer" and each handler's name
	Calls      map[string]int  // each handler's number of calls ("pops" in the queue world)
	Enqueued   int             // objects that entered the queue
}

func (s *side) snapshot() snapshot {
	sn := snapshot{Indexer: map[string]string{}, Synced: map[string]bool{}, Calls: map[string]int{}}
	if s.inf != nil {
		objs, rv := s.inf.indexer()
		for _, o := range objs {
			sn.Indexer[keyOf(o)] = describe(o)
		}
		sn.StoreRV = rv
		sn.LastSyncRV = s.inf.lastSyncRV()
		sn.Synced["informer"] = s.inf.hasSynced()
		if q, ok := s.inf.(interface{ popCount() int }); ok {
			sn.Calls["pops"] = q.popCount()
		}
	}
	s.mu.Lock()
	sn.Enqueued = s.enqueued
	s.mu.Unlock()
	for _, h := range s.handlers {
		if h.removed {
			continue
		}
		sn.Calls[h.name] = h.callCount()
		if h.reg != nil {
			sn.Synced[h.name] = h.reg.HasSynced()
		}
	}
	return sn
}

// noteChanges records what the step changed in the indexer and in
// HasSynced, as trace lines.
func (s *side) noteChanges(sn snapshot) {
	keys := make([]string, 0, len(sn.Indexer)+len(s.lastIndexer))
	for k := range sn.Indexer {
		keys = append(keys, k)
	}
	for k := range s.lastIndexer {
		if _, ok := sn.Indexer[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		v, now := sn.Indexer[k]
		switch old, before := s.lastIndexer[k]; {
		case !before:
			s.rec.add(layerIndexer, k, "add    "+v)
		case !now:
			s.rec.add(layerIndexer, k, "delete "+old)
		case old != v:
			s.rec.add(layerIndexer, k, "update "+old+" -> "+v)
		}
	}
	for _, n := range syncedNames(sn) {
		if v := sn.Synced[n]; v != s.lastSynced[n] {
			what := "handler " + n
			if n == "informer" {
				what = "informer"
			}
			s.rec.add(layerSynced, "", fmt.Sprintf("%s HasSynced=%t", what, v))
		}
	}
	s.lastIndexer, s.lastSynced = sn.Indexer, sn.Synced
}

// --- cachelab ---

type cachelabInformer struct{ inf *informer.SharedIndexInformer }

func newCachelabInformer(s *side, cfg startConfig, seed uint64, transform func(any) (any, error)) (informerOps, error) {
	inf := informer.New(s.probe, informer.Options{
		Stack:         cfg.stack,
		ExampleObject: examplePod(),
		ResyncPeriod:  cfg.resync,
		Indexers:      store.Indexers{store.NamespaceIndex: store.MetaNamespaceIndexFunc},
		Clock:         s.ticks,
		RelistClock:   clock.RealClock{}, // as client-go: relist backoff waits real time
		Rand:          rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		Trace:         func(e informer.Event) { traceInformer(s.rec, e) },
		ReflectorTrace: func(e reflector.Event) {
			traceReflector(s.rec, s.probe, e)
		},
	})
	if err := inf.SetTransform(transform); err != nil {
		return nil, err
	}
	return cachelabInformer{inf}, nil
}

func (c cachelabInformer) addHandler(h *handler) error {
	var period *time.Duration
	if h.resync >= 0 {
		period = &h.resync
	}
	reg, err := c.inf.AddEventHandlerWithOptions(h, informer.HandlerOptions{Name: h.name, ResyncPeriod: period})
	if err != nil {
		return err
	}
	h.reg, h.handle = reg, reg
	return nil
}

func (c cachelabInformer) removeHandler(h *handler) error {
	return c.inf.RemoveEventHandler(h.handle.(informer.Registration))
}
func (c cachelabInformer) run(ctx context.Context) { c.inf.Run(ctx) }
func (c cachelabInformer) hasSynced() bool         { return c.inf.HasSynced() }
func (c cachelabInformer) lastSyncRV() string      { return c.inf.LastSyncResourceVersion() }
func (c cachelabInformer) indexer() ([]any, string) {
	idx := c.inf.GetIndexer()
	return idx.List(), idx.LastStoreSyncResourceVersion()
}
func (c cachelabInformer) backlog() (informer.Backlog, bool) { return c.inf.Backlog(), true }

// traceInformer turns cachelab's processing steps into trace lines.
// Handler calls are recorded by the handlers themselves, the same way on
// both sides.
func traceInformer(rec *recorder, e informer.Event) {
	switch e.Step {
	case informer.StepPop:
		for _, d := range e.Deltas {
			rec.add(layerPop, keyOf(d.Object), fmt.Sprintf("%-8s %s%s", d.Type, describe(d.Object), initialMark(e.InInitialList)))
		}
	case informer.StepPopBatch:
		rec.add(layerPop, "", fmt.Sprintf("batch of %d deltas, written in one transaction", len(e.Deltas)))
		for _, d := range e.Deltas {
			rec.add(layerPop, keyOf(d.Object), fmt.Sprintf("%-8s %s%s", d.Type, describe(d.Object), initialMark(e.InInitialList)))
		}
	}
}

func initialMark(initial bool) string {
	if initial {
		return " (initial list)"
	}
	return ""
}

// traceReflector turns cachelab's reflector steps into trace lines. The
// requests and events themselves are recorded by the probe.
func traceReflector(rec *recorder, p *probe, e reflector.Event) {
	switch e.Step {
	case reflector.StepEvent, reflector.StepEventDropped:
		p.handledEvent()
	case reflector.StepReplace:
		rec.add(layerReflector, "", fmt.Sprintf("replace: %d objects, store at rv %s", e.Count, e.RV))
		p.replaced()
	case reflector.StepWatchListFallback:
		rec.add(layerReflector, "", "watch-list failed; falling back to LIST: "+errText(e.Err))
	case reflector.StepWatchEnded:
		if e.Err == nil {
			rec.add(layerReflector, "", "watch ended")
		} else {
			rec.add(layerReflector, "", "watch ended: "+errText(e.Err))
		}
	case reflector.StepRVUnavailable:
		rec.add(layerReflector, "", "resourceVersion gone (410/too large): next request asks for rv \"\"")
	case reflector.StepRelistBackoff:
		rec.add(layerReflector, "", fmt.Sprintf("relist after backoff %v", e.Delay.Round(time.Millisecond)))
	case reflector.StepRewatchBackoff:
		rec.add(layerReflector, "", fmt.Sprintf("re-watch after backoff %v", e.Delay.Round(time.Millisecond)))
	case reflector.StepResync:
		rec.add(layerReflector, "", "resync: queue Sync deltas for the cache's objects")
	case reflector.StepWatchErrorHandler:
		rec.add(layerReflector, "", "watch error handler: "+errText(e.Err))
	}
}

func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return describeErr(err)
}

// --- client-go ---

type clientGoInformer struct{ inf cache.SharedIndexInformer }

func newClientGoInformer(s *side, cfg startConfig, transform func(any) (any, error)) (informerOps, error) {
	inf := cache.NewSharedIndexInformerWithOptions(s.probe, examplePod(), cache.SharedIndexInformerOptions{
		ResyncPeriod: cfg.resync,
		Indexers:     cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc},
	})
	if err := setClock(inf, s.clock); err != nil {
		return nil, err
	}
	if err := inf.SetTransform(transform); err != nil {
		return nil, err
	}
	return clientGoInformer{inf}, nil
}

// setClock gives client-go's informer the simulator's fake clock. client-go
// has the field ("clock allows for testability") but no option to set it,
// so the runner sets the informer's and its processor's clock fields
// before anything reads them. The informer hands its clock to the
// controller and reflector it builds in Run, so resync timers, watch
// durations and re-watch backoff all run on the fake clock, as in
// cachelab. (Its relist backoff always uses the real clock.)
func setClock(inf cache.SharedIndexInformer, c clock.Clock) error {
	v := reflect.ValueOf(inf)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("sim: client-go informer is a %T, not the struct pointer the fake clock needs", inf)
	}
	ic := v.Elem().FieldByName("clock")
	proc := v.Elem().FieldByName("processor")
	if !ic.IsValid() || !proc.IsValid() || proc.Kind() != reflect.Pointer {
		return fmt.Errorf("sim: client-go's sharedIndexInformer has no clock or processor field; cannot run it on the fake clock")
	}
	pc := proc.Elem().FieldByName("clock")
	if !pc.IsValid() {
		return fmt.Errorf("sim: client-go's sharedProcessor has no clock field")
	}
	for _, f := range []reflect.Value{ic, pc} {
		reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().Set(reflect.ValueOf(c))
	}
	return nil
}

func (c clientGoInformer) addHandler(h *handler) error {
	opts := cache.HandlerOptions{}
	if h.resync >= 0 {
		opts.ResyncPeriod = &h.resync
	}
	reg, err := c.inf.AddEventHandlerWithOptions(h, opts)
	if err != nil {
		return err
	}
	h.reg, h.handle = reg, reg
	return nil
}

func (c clientGoInformer) removeHandler(h *handler) error {
	return c.inf.RemoveEventHandler(h.handle.(cache.ResourceEventHandlerRegistration))
}
func (c clientGoInformer) run(ctx context.Context) { c.inf.RunWithContext(ctx) }
func (c clientGoInformer) hasSynced() bool         { return c.inf.HasSynced() }
func (c clientGoInformer) lastSyncRV() string      { return c.inf.LastSyncResourceVersion() }
func (c clientGoInformer) indexer() ([]any, string) {
	idx := c.inf.GetIndexer()
	return idx.List(), idx.LastStoreSyncResourceVersion()
}
func (c clientGoInformer) backlog() (informer.Backlog, bool) { return informer.Backlog{}, false }

func examplePod() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("Pod")
	return u
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
