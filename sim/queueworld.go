package sim

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	"github.com/cachelab/cachelab/deltafifo"
	"github.com/cachelab/cachelab/fifo"
	"github.com/cachelab/cachelab/informer"
	"github.com/cachelab/cachelab/internal/meter"
	"github.com/cachelab/cachelab/metrics"
	"github.com/cachelab/cachelab/reflector"
	"github.com/cachelab/cachelab/sim/trace"
	"github.com/cachelab/cachelab/store"
)

// The queue world takes the informer apart: a reflector fills the stack's
// queue (RealFIFO or DeltaFIFO) and the simulator itself pops it, after
// each step, into a plain store. "pause" stops the popping, so deltas pile
// up in the queue exactly as the stack queues them; "resume" pops them.
//
// Why not pause a SharedIndexInformer? Both of client-go's queues process
// a popped item while holding the queue's lock, so a stuck handler or
// indexer stops the reflector's next write too: events then wait in the
// watch, and what the queue holds when processing resumes depends on the
// scheduler. Popping from outside the informer is the only way to show
// DeltaFIFO's grouping by key deterministically.
type queueOps interface {
	informerOps
	// pop pops one item, waiting at most timeout; ok is false if none
	// came.
	pop(timeout time.Duration) (ok bool, err error)
	// queued is cachelab's queue length (ok is false for client-go).
	queued() (n int, ok bool)
}

// queueBase is what both queue worlds share: the consumer store (the
// indexer stand-in) and the pop recorder.
type queueBase struct {
	rec   *trace.Recorder
	order popOrder // a resync's SyncAll ahead of a Bookmark of its instant
	pops  int
	mu    sync.Mutex
	store map[string]any // key -> object, the consumer's view
}

// consume is the pop's process function, the same for both sides: it
// records the popped deltas and applies them to the consumer store.
func (b *queueBase) consume(kind func(d any) (typ string, obj any), deltas []any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pops++
	parts := make([]string, len(deltas))
	var first trace.Event
	for i, d := range deltas {
		typ, obj := kind(d)
		parts[i] = typ + " " + trace.Describe(obj)
		if i == 0 {
			first = popEvent("", obj, false)
			if typ == "Sync" {
				first.Order = trace.OrderSameObject
			}
		}
		switch typ {
		case "Deleted":
			delete(b.store, trace.KeyOf(obj))
		case "ReplacedAll":
			b.store = map[string]any{}
			for _, o := range replacedObjects(obj) {
				b.store[trace.KeyOf(o)] = o
			}
		case "SyncAll", "Bookmark":
		default:
			b.store[trace.KeyOf(obj)] = obj
		}
	}
	// One event for the key's deltas, which a DeltaFIFO pops together;
	// it is as free to move as its first delta.
	first.Detail = strings.Join(parts, ", ")
	if len(deltas) > 1 {
		first.Detail = fmt.Sprintf("%s: %d deltas: %s", first.Key, len(deltas), first.Detail)
	}
	b.order.record(b.rec, first)
}

func replacedObjects(obj any) []any {
	switch t := obj.(type) {
	case deltafifo.ReplacedAllInfo:
		return t.Objects
	case cache.ReplacedAllInfo:
		return t.Objects
	}
	return nil
}

func (b *queueBase) popCount() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.pops
}

// list is the consumer store's objects, in key order (see knownKeys).
func (b *queueBase) list() []any {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]any, 0, len(b.store))
	for _, key := range slices.Sorted(maps.Keys(b.store)) {
		out = append(out, b.store[key])
	}
	return out
}

// knownKeys is the consumer store as DeltaFIFO's KnownObjects. It lists
// in key order, one of the orders a map gives, as cachelab's store does:
// a resync or a relist iterates it, and the trace must be the same on
// every run (the comparison takes that batch as a set).
type knownKeys struct{ b *queueBase }

func (k knownKeys) ListKeys() []string {
	k.b.mu.Lock()
	defer k.b.mu.Unlock()
	return slices.Sorted(maps.Keys(k.b.store))
}

func (k knownKeys) GetByKey(key string) (any, bool, error) {
	k.b.mu.Lock()
	defer k.b.mu.Unlock()
	o, ok := k.b.store[key]
	return o, ok, nil
}

func (*queueBase) addHandler(*handler) error {
	return fmt.Errorf("the queue world has no handlers (start-queue); use start for an informer")
}
func (*queueBase) removeHandler(*handler) error { return fmt.Errorf("the queue world has no handlers") }

// --- cachelab ---

type cachelabQueue interface {
	reflector.Store
	Pop(process fifo.PopProcessFunc) (any, error)
	Len() int
	HasSynced() bool
	Close()
}

type cachelabQueueWorld struct {
	*queueBase
	q cachelabQueue
	r *reflector.Reflector
}

func newCachelabQueueWorld(s *side, cfg startConfig, seed uint64, transform func(any) (any, error)) *cachelabQueueWorld {
	w := &cachelabQueueWorld{queueBase: &queueBase{rec: s.rec, store: map[string]any{}, order: popOrder{now: s.clock.Now}}}
	if cfg.stack == informer.Classic {
		w.q = deltafifo.NewDeltaFIFO(deltafifo.DeltaFIFOOptions{KeyFunction: store.MetaNamespaceKeyFunc,
			KnownObjects: knownKeys{w.queueBase}, EmitDeltaTypeReplaced: true, Transformer: transform})
	} else {
		var id metrics.InformerNameAndResource
		id, s.releaseName = meter.ReserveCachelabFor("sim", cfg.res.GroupVersionResource())
		w.q = deltafifo.NewRealFIFO(deltafifo.RealFIFOOptions{KeyFunction: store.MetaNamespaceKeyFunc,
			Transformer: transform, AtomicEvents: true, EmitDeltaTypeBookmark: true,
			Identifier: id, MetricsProvider: s.meter.Provider(), Clock: s.ticks})
	}
	w.r = reflector.New(s.conn, w.q, reflector.Options{ExpectedType: exampleOf(cfg.res), ResyncPeriod: cfg.resync,
		UseWatchList: cfg.stack != informer.Classic, Clock: parkClock{s.ticks, s.conn.RewatchBackoff}, RelistClock: clock.RealClock{},
		Rand: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), Trace: reflectorTrace(s, cfg.stack)})
	return w
}

func (w *cachelabQueueWorld) run(ctx context.Context) {
	w.r.Run(ctx)
	w.q.Close()
}
func (w *cachelabQueueWorld) hasSynced() bool    { return w.q.HasSynced() }
func (w *cachelabQueueWorld) lastSyncRV() string { return w.r.LastSyncResourceVersion() }
func (w *cachelabQueueWorld) hasStarted() bool   { return true } // start-queue runs it at once
func (w *cachelabQueueWorld) indexer() ([]any, string) {
	return w.list(), ""
}
func (w *cachelabQueueWorld) backlog() (informer.Backlog, bool) { return informer.Backlog{}, true }
func (w *cachelabQueueWorld) queued() (int, bool)               { return w.q.Len(), true }

func (w *cachelabQueueWorld) pop(time.Duration) (bool, error) {
	if w.q.Len() == 0 {
		return false, nil
	}
	_, err := w.q.Pop(func(obj any, _ bool) error {
		w.consume(func(d any) (string, any) {
			x := d.(deltafifo.Delta)
			return string(x.Type), x.Object
		}, toAnys(obj.(deltafifo.Deltas)))
		return nil
	})
	return true, err
}

func toAnys[T any](xs []T) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

// --- client-go ---

type clientGoQueueWorld struct {
	*queueBase
	q cache.Queue
	r *cache.Reflector

	pending chan error // a pop that has not returned yet
}

func newClientGoQueueWorld(s *side, cfg startConfig, transform func(any) (any, error)) *clientGoQueueWorld {
	w := &clientGoQueueWorld{queueBase: &queueBase{rec: s.rec, store: map[string]any{}, order: popOrder{now: s.clock.Now}}}
	if cfg.stack == informer.Classic {
		w.q = cache.NewDeltaFIFOWithOptions(cache.DeltaFIFOOptions{KnownObjects: knownKeys{w.queueBase},
			EmitDeltaTypeReplaced: true, Transformer: transform})
	} else {
		var id cache.InformerNameAndResource
		id, s.releaseName = meter.ReserveClientGoFor("sim", cfg.res.GroupVersionResource())
		w.q = cache.NewRealFIFOWithOptions(cache.RealFIFOOptions{KeyFunction: cache.MetaNamespaceKeyFunc,
			Transformer: transform, AtomicEvents: true, EmitDeltaTypeBookmark: true,
			Identifier: id, MetricsProvider: s.meter.ClientGoProvider()})
	}
	w.r = cache.NewReflectorWithOptions(s.conn, exampleOf(cfg.res), w.q, cache.ReflectorOptions{ResyncPeriod: cfg.resync, Clock: stopClock{s.ticks, s.stopped, s.jitter, s.conn.RewatchBackoff}})
	return w
}

func (w *clientGoQueueWorld) run(ctx context.Context) {
	w.r.RunWithContext(ctx)
	w.q.Close()
}
func (w *clientGoQueueWorld) hasSynced() bool    { return w.q.HasSynced() }
func (w *clientGoQueueWorld) lastSyncRV() string { return w.r.LastSyncResourceVersion() }
func (w *clientGoQueueWorld) hasStarted() bool   { return true } // start-queue runs it at once
func (w *clientGoQueueWorld) indexer() ([]any, string) {
	return w.list(), ""
}
func (w *clientGoQueueWorld) backlog() (informer.Backlog, bool) { return informer.Backlog{}, false }
func (w *clientGoQueueWorld) queued() (int, bool)               { return 0, false }

// pop pops one item. client-go's queues cannot say how long they are, so
// a pop that finds the queue empty waits; after timeout it is left
// waiting (it takes the next item the queue gets, or ends at Close) and
// the caller reports that client-go had fewer items than cachelab.
func (w *clientGoQueueWorld) pop(timeout time.Duration) (bool, error) {
	if w.pending == nil {
		w.pending = make(chan error, 1)
		go func(done chan error) {
			_, err := w.q.Pop(func(obj any, _ bool) error {
				w.consume(func(d any) (string, any) {
					x := d.(cache.Delta)
					return string(x.Type), x.Object
				}, toAnys(obj.(cache.Deltas)))
				return nil
			})
			done <- err
		}(w.pending)
	}
	select {
	case err := <-w.pending:
		w.pending = nil
		return true, err
	case <-time.After(timeout):
		return false, nil
	}
}

// drain pops, after a settled step, everything cachelab's queue holds, and
// as many items from client-go's.
func (r *runner) drain() error {
	cl := r.sides[0].inf.(queueOps)
	cg := r.sides[1].inf.(queueOps)
	n := 0
	for {
		ok, err := cl.pop(0)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		n++
	}
	for i := range n {
		ok, err := cg.pop(r.opts.SettleTimeout)
		if err != nil {
			return err
		}
		if !ok {
			// The step's last lines say what each queue was fed: a
			// relist, a resync or an event on one side only.
			return &trace.Divergence{Layer: trace.LayerPop, Diff: fmt.Sprintf("cachelab's queue held %d items; client-go's gave only %d within %v.\n"+
				"The step's last trace lines, cachelab's:\n%sclient-go's:\n%s",
				n, i, r.opts.SettleTimeout, r.sides[0].rec.Peek(20), r.sides[1].rec.Peek(20))}
		}
	}
	return nil
}
