package sim

// The two informers behind informerOps: cachelab's, with its trace turned
// into trace lines, and client-go's, run on the simulator's fake clock.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	"github.com/cachelab/cachelab/informer"
	"github.com/cachelab/cachelab/internal/goroutines"
	"github.com/cachelab/cachelab/internal/meter"
	"github.com/cachelab/cachelab/listwatch"
	"github.com/cachelab/cachelab/metrics"
	"github.com/cachelab/cachelab/reflector"
	"github.com/cachelab/cachelab/sim/trace"
	"github.com/cachelab/cachelab/sim/world"
	"github.com/cachelab/cachelab/store"
)

// --- cachelab ---

type cachelabInformer struct {
	inf *informer.SharedIndexInformer
	// plant, of a planted bug (Options.Plant), stands between the
	// informer and each handler.
	plant func(informer.ResourceEventHandler) informer.ResourceEventHandler
}

func newCachelabInformer(s *side, cfg startConfig, seed uint64, transform func(any) (any, error)) (informerOps, error) {
	var id metrics.InformerNameAndResource
	id, s.releaseName = meter.ReserveCachelabFor("sim", cfg.res.GroupVersionResource())
	pops := &popOrder{now: s.clock.Now}
	var lw reflector.ListerWatcher = s.conn
	if s.plantWatch != nil {
		lw = plantedWatch{s.conn, s.plantWatch}
	}
	inf := informer.New(lw, informer.Options{
		Identifier:      id,
		MetricsProvider: s.meter.Provider(),
		Stack:           cfg.stack,
		ExampleObject:   exampleOf(cfg.res),
		ResyncPeriod:    cfg.resync,
		Indexers:        store.Indexers{store.NamespaceIndex: store.MetaNamespaceIndexFunc},
		Clock:           parkClock{s.ticks, s.conn.RewatchBackoff},
		RelistClock:     clock.RealClock{}, // as client-go: relist backoff waits real time
		Rand:            rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		Trace:           func(e informer.Event) { pops.traceInformer(s.rec, e) },
		ReflectorTrace:  reflectorTrace(s, cfg.stack),
		Labels:          []string{sideLabel, s.id}, // run by a factory's Start, its goroutines are still its side's
	})
	if err := inf.SetTransform(transform); err != nil {
		return nil, err
	}
	return cachelabInformer{inf: inf, plant: s.plant}, nil
}

func (c cachelabInformer) addHandler(h *handler) error {
	var period *time.Duration
	if h.resync >= 0 {
		period = &h.resync
	}
	logger := handlerLogger(h.rec, h.name)
	var to informer.ResourceEventHandler = h
	if c.plant != nil {
		to = c.plant(h)
	}
	reg, err := c.inf.AddEventHandlerWithOptions(to, informer.HandlerOptions{Name: h.name, ResyncPeriod: period, Logger: &logger})
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
func (c cachelabInformer) hasStarted() bool        { return c.inf.HasStarted() }
func (c cachelabInformer) indexer() ([]any, string) {
	idx := c.inf.GetIndexer()
	return idx.List(), idx.LastStoreSyncResourceVersion()
}
func (c cachelabInformer) backlog() (informer.Backlog, bool) { return c.inf.Backlog(), true }

// traceInformer turns cachelab's processing steps into trace lines.
// Handler calls are recorded by the handlers themselves, the same way on
// both sides.
func (p *popOrder) traceInformer(rec *trace.Recorder, e informer.Event) {
	switch e.Step {
	case informer.StepSkip:
		obj := e.Notification.New
		ev := trace.ObjectEvent(trace.LayerPop, trace.KindSkip, "", obj, fmt.Sprintf("sync %s not sent to %s: resync not due (an unchanged object reaches only handlers whose resync has come)",
			trace.Describe(obj), strings.Join(e.Skipped, ", ")))
		ev.Order = trace.OrderSameObject
		rec.Record(ev)
	case informer.StepPop:
		for _, d := range e.Deltas {
			p.record(rec, popEvent(string(d.Type), d.Object, e.InInitialList))
		}
	case informer.StepPopBatch:
		// How many deltas a batch holds depends on how far processing
		// lags the reflector, which is timing, so the trace shows the
		// deltas one by one, as a single pop would.
		for _, d := range e.Deltas {
			p.record(rec, popEvent(string(d.Type), d.Object, e.InInitialList))
		}
	}
}

// popEvent is the event of one delta taken from a queue. A Sync delta
// comes from a resync, which lists the cache in map order.
func popEvent(op string, obj any, initial bool) trace.Event {
	e := trace.ObjectEvent(trace.LayerPop, trace.KindPop, op, obj, trace.Describe(obj)+initialMark(initial))
	if op == "Sync" {
		e.Order = trace.OrderSameObject
	}
	return e
}

func initialMark(initial bool) string {
	if initial {
		return " (initial list)"
	}
	return ""
}

// traceReflector turns cachelab's reflector steps into trace lines. The
// requests and events themselves are recorded by the connection (world.Conn).
// reflectorTrace records cachelab's reflector's events, hands each
// re-watch backoff it draws to client-go's (backoffJitter), and tells
// Options.OnRealWait of each relist backoff, a wait of real time.
func reflectorTrace(s *side, stack informer.Stack) func(reflector.Event) {
	return func(e reflector.Event) {
		if e.Step == reflector.StepRewatchBackoff {
			s.jitter.drawn(e.Delay)
		}
		traceReflector(s.rec, s.conn, stack, e)
		if e.Step == reflector.StepRelistBackoff && s.realWait != nil {
			s.realWait(e.Delay)
		}
	}
}

func traceReflector(rec *trace.Recorder, p *world.Conn, stack informer.Stack, e reflector.Event) {
	switch e.Step {
	case reflector.StepEvent, reflector.StepEventDropped:
		p.HandledEvent()
	case reflector.StepReplace:
		rec.Add(trace.LayerReflector, trace.KindReflector, "", fmt.Sprintf("replace: %d %s, store at rv %s", e.Count, plural(e.Count, "object", "objects"), e.RV))
		p.Replaced()
	case reflector.StepConsistencyCheck:
		rec.Add(trace.LayerReflector, trace.KindReflector, "", fmt.Sprintf("data consistency check: %d %s from the watch-list against a LIST of rv %s (KUBE_WATCHLIST_INCONSISTENCY_DETECTOR)",
			e.Count, plural(e.Count, "object", "objects"), e.RV))
	case reflector.StepWatchListFallback:
		rec.Add(trace.LayerReflector, trace.KindReflector, "", "watch-list failed; falling back to LIST: "+errText(e.Err))
	case reflector.StepWatchEnded:
		if e.Err == nil {
			rec.Add(trace.LayerReflector, trace.KindReflector, "", "watch ended")
		} else {
			rec.Add(trace.LayerReflector, trace.KindReflector, "", "watch ended: "+errText(e.Err))
		}
	case reflector.StepWatchRefused:
		rec.Add(trace.LayerReflector, trace.KindReflector, "", "watch-list request failed, no watch opened: "+errText(e.Err))
	case reflector.StepRVUnavailable:
		rec.Add(trace.LayerReflector, trace.KindReflector, "", "resourceVersion gone (410/too large): next request asks for rv \"\"")
	case reflector.StepRelistBackoff:
		rec.Add(trace.LayerReflector, trace.KindReflector, "", fmt.Sprintf("relist after backoff %v", e.Delay.Round(time.Millisecond)))
		p.RelistBackoff(e.Delay)
	case reflector.StepRewatchBackoff:
		// The connection is parked by the clock, once it has the wait
		// (parkClock).
		rec.Add(trace.LayerReflector, trace.KindReflector, "", fmt.Sprintf("re-watch after backoff %v", e.Delay.Round(time.Millisecond)))
	case reflector.StepResync:
		if stack == informer.Classic {
			rec.Add(trace.LayerReflector, trace.KindReflector, "", "resync: queue a Sync delta for each cached object with nothing queued")
		} else {
			rec.Add(trace.LayerReflector, trace.KindReflector, "", "resync: queue one SyncAll delta (every cached object, at pop)")
		}
	case reflector.StepWatchErrorHandler:
		rec.Add(trace.LayerReflector, trace.KindReflector, "", "watch error handler: "+errText(e.Err))
	}
}

func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return world.DescribeErr(err)
}

// --- client-go ---

type clientGoInformer struct {
	inf cache.SharedIndexInformer
	// loop is the goroutine that runs the informer, as a dump numbers it:
	// client-go's controller pops its queue on it (processLoop).
	loop *atomic.Value
}

func newClientGoInformer(s *side, cfg startConfig, transform func(any) (any, error)) (informerOps, error) {
	var id cache.InformerNameAndResource
	id, s.releaseName = meter.ReserveClientGoFor("sim", cfg.res.GroupVersionResource())
	inf := cache.NewSharedIndexInformerWithOptions(s.conn, exampleOf(cfg.res), cache.SharedIndexInformerOptions{
		ResyncPeriod:            cfg.resync,
		Indexers:                cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc},
		Identifier:              id,
		InformerMetricsProvider: s.meter.ClientGoProvider(),
	})
	if err := setClock(inf, stopClock{s.ticks, s.stopped, s.jitter, s.conn.RewatchBackoff}); err != nil {
		return nil, err
	}
	if err := inf.SetTransform(transform); err != nil {
		return nil, err
	}
	return clientGoInformer{inf, &atomic.Value{}}, nil
}

// setClock gives client-go's informer the simulator's fake clock. client-go
// has the field ("clock allows for testability") but no option to set it,
// so the runner sets the informer's and its processor's clock fields
// before anything reads them. The informer hands its clock to the
// controller and reflector it builds in Run, so resync timers, watch
// durations and re-watch backoff all run on the fake clock, as in
// cachelab.
//
// Its relist backoff waits on the real clock, and nothing here can
// change that without changing client-go (REFERENCE.md F6): the reflector
// runs each ListAndWatch under r.delayHandler.Until, and
// wait.DelayFunc.Until (apimachinery's util/wait, delay.go) makes its
// timer with the package's internalClock, a clock.RealClock value, not
// an interface a caller could replace. The clock given here reaches only
// the delays' reset (DelayWithReset: the sequence starts again after 2
// minutes of this clock). ReflectorOptions.Backoff changes the delays,
// not the clock, and the informer's controller builds its reflector
// without it. So a placement that relists waits 0.8 to 1.6 s of real
// time (more after repeated failures), and cachelab's side waits the
// same way (RelistClock) so that both meet the world as it is then.
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
	logger := handlerLogger(h.rec, h.name)
	opts := cache.HandlerOptions{Logger: &logger}
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
func (c clientGoInformer) run(ctx context.Context) {
	c.loop.Store(goroutines.Current())
	c.inf.RunWithContext(ctx)
}

// drained reports whether client-go's informer has popped everything
// queued: the goroutine that pops waits in its queue's Pop for more
// (true too when it does not run). A resync tick marks, on the
// reflector's goroutine, which handlers are due a resync by the clock's
// time, and the pop of what it queued hands it on to those; a second tick
// before that pop marks them again, for its own time. Settling between
// two moves of the clock waits for the pop, as cachelab's side does by
// being idle (settleSecond).
func (c clientGoInformer) drained() bool {
	id, _ := c.loop.Load().(string)
	if id == "" {
		return true
	}
	header := "goroutine " + id + " ["
	for _, g := range goroutines.All() {
		if strings.HasPrefix(g, header) {
			return goroutines.State(g) == "sync.Cond.Wait" && strings.Contains(g, ").Pop") // Pop, or PopBatch (the default stack)
		}
	}
	return true
}
func (c clientGoInformer) hasSynced() bool    { return c.inf.HasSynced() }
func (c clientGoInformer) lastSyncRV() string { return c.inf.LastSyncResourceVersion() }

// hasStarted is the informer's HasStarted, a method of client-go's type
// that its interface does not name (P24).
func (c clientGoInformer) hasStarted() bool {
	h, ok := c.inf.(interface{ HasStarted() bool })
	return ok && h.HasStarted()
}
func (c clientGoInformer) indexer() ([]any, string) {
	idx := c.inf.GetIndexer()
	return idx.List(), idx.LastStoreSyncResourceVersion()
}
func (c clientGoInformer) backlog() (informer.Backlog, bool) { return informer.Backlog{}, false }

func examplePod() *unstructured.Unstructured { return exampleOf(listwatch.Pods) }

// exampleOf is an informer's example object for res: what its
// reflectors check each object's apiVersion and kind against.
func exampleOf(res listwatch.Resource) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(res.APIVersion())
	u.SetKind(res.Kind)
	return u
}

// plantedWatch is cachelab's connection with each WATCH its reflector
// sends rewritten first (a planted bug, Options.Plant).
type plantedWatch struct {
	*world.Conn
	rewrite func(metav1.ListOptions) metav1.ListOptions
}

func (p plantedWatch) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return p.Conn.Watch(p.rewrite(opts))
}

func (p plantedWatch) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return p.Conn.WatchWithContext(ctx, p.rewrite(opts))
}
