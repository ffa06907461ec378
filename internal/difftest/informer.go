package difftest

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/cachelab/cachelab/informer"
	"github.com/cachelab/cachelab/internal/meter"
	"github.com/cachelab/cachelab/reflector"
	"github.com/cachelab/cachelab/store"
)

// InformerConfig sets up both informers of an InformerWorld the same way.
type InformerConfig struct {
	Stack        informer.Stack
	ResyncPeriod time.Duration
	// GateIndex adds an index whose function blocks while a side's gate
	// is shut and the object carries LabelGate: a way to hold processing
	// still (so deltas pile up) in both implementations.
	GateIndex bool
	Transform bool // SetTransform(Transform) before start
	// PanicIndexOn adds an index whose function panics on the object
	// with this key: processing that object panics (P14).
	PanicIndexOn string
	// Metered names both informers (a reserved name, pods) and gives each
	// a Meter: the instruments made and the values a scrape would see
	// are compared after every settled step (P20).
	Metered bool
}

// LabelGate marks objects whose indexing waits for the processing gate.
const LabelGate = "gate"

// HandlerConfig sets up one handler on both sides.
type HandlerConfig struct {
	Resync *time.Duration // AddEventHandlerWithResyncPeriod
	Filter func(any) bool // wrapped in FilteringResourceEventHandler
	Slow   bool           // each call waits for ReleaseHandler
	// PanicOn makes each call about the object with this key panic
	// (P14); the handler is added with its own logger.
	PanicOn string
}

// InformerWorld runs cachelab's and client-go's SharedIndexInformer over
// two scripted servers and compares, after every settled step: requests,
// each handler's calls (separately; map-order runs sorted), the indexer's
// content and resourceVersions, HasSynced of the informer and of every
// registration, WatchErrorHandler calls, and what panics logged and which
// panic handlers ran (see CatchPanics).
type InformerWorld struct {
	*World
	Cfg      InformerConfig
	CLI      *informer.SharedIndexInformer
	CGI      cache.SharedIndexInformer
	handlers []string
	logs     map[string][2]*Log // per handler: cachelab, client-go
	regs     map[string][2]any
	gates    map[string][2]*gate
	index    [2]*gate
	werr     [2]*Log
	crashes  [2]*Log // what panics logged, and which panic handlers ran
	// Meters hear each side's metrics when Cfg.Metered.
	Meters [2]*meter.Meter
	held   bool // processing is held: the indexer must not be read
	// IgnoreRegistrationSync leaves registrations' HasSynced out of the
	// comparison. Needed where client-go itself races: in the classic
	// stack DeltaFIFO reports synced before process runs (D6), so a
	// registration whose handler is slow may or may not count its
	// initial adds before the informer's sync reaches it.
	IgnoreRegistrationSync bool
	// ignoreStoreRV leaves the indexer's resourceVersion out: in the
	// classic stack it is the RV of the last object written, and a resync
	// writes the cached objects in map order (D5).
	ignoreStoreRV bool
	cancel        context.CancelFunc
	wg            sync.WaitGroup
}

// NewInformerWorld builds both informers (not started). Call it inside a
// synctest bubble.
func NewInformerWorld(t *testing.T, cfg InformerConfig) *InformerWorld {
	if cfg.Stack == informer.Classic {
		clientfeaturestesting.SetFeatureDuringTest(t, features.InOrderInformers, false)
		clientfeaturestesting.SetFeatureDuringTest(t, features.WatchListClient, false)
	}
	w := &InformerWorld{World: newWorld(t), Cfg: cfg, logs: map[string][2]*Log{}, regs: map[string][2]any{},
		gates: map[string][2]*gate{}, index: [2]*gate{{}, {}}, werr: [2]*Log{{}, {}}, crashes: [2]*Log{{}, {}}}
	clIdx, cgIdx := store.Indexers{store.NamespaceIndex: store.MetaNamespaceIndexFunc}, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}
	if cfg.GateIndex {
		clIdx["gate"], cgIdx["gate"] = w.index[0].indexFunc, w.index[1].indexFunc
	}
	if cfg.PanicIndexOn != "" {
		clIdx["panics"], cgIdx["panics"] = panicIndex(cfg.PanicIndexOn), panicIndex(cfg.PanicIndexOn)
	}
	clOpts := informer.Options{Stack: cfg.Stack, ExampleObject: &unstructured.Unstructured{}, ResyncPeriod: cfg.ResyncPeriod, Indexers: clIdx}
	cgOpts := cache.SharedIndexInformerOptions{ResyncPeriod: cfg.ResyncPeriod, Indexers: cgIdx}
	if cfg.Metered {
		var release func()
		clOpts.Identifier, cgOpts.Identifier, release = meter.Reserve("meter")
		t.Cleanup(release)
		w.Meters = [2]*meter.Meter{meter.New(), meter.New()}
		clOpts.MetricsProvider, cgOpts.InformerMetricsProvider = w.Meters[0].Provider(), w.Meters[1].ClientGoProvider()
		w.compare = append(w.compare, w.compareMeters)
	}
	w.CLI = informer.New(w.CL, clOpts)
	w.CGI = cache.NewSharedIndexInformerWithOptions(w.CG, &unstructured.Unstructured{}, cgOpts)
	if cfg.Transform {
		mustNil(t, w.CLI.SetTransform(Transform))
		mustNil(t, w.CGI.SetTransform(Transform))
	}
	mustNil(t, w.CLI.SetWatchErrorHandler(func(_ context.Context, _ *reflector.Reflector, err error) { w.werr[0].Add("%s", NormErr(err)) }))
	mustNil(t, w.CGI.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) { w.werr[1].Add("%s", NormErr(err)) }))
	w.ignoreStoreRV = cfg.Stack == informer.Classic && cfg.ResyncPeriod > 0
	w.compare = append(w.compare, w.compareHandlers, w.compareCrashes, w.compareState)
	return w
}

func mustNil(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// AddHandler registers a recording handler named name on both sides.
func (w *InformerWorld) AddHandler(name string, hc HandlerConfig) {
	w.T.Helper()
	logs := [2]*Log{{}, {}}
	gates := [2]*gate{}
	var regs [2]any
	var errs [2]error
	for side := range 2 {
		h := &recHandler{log: logs[side], panicOn: hc.PanicOn, name: name}
		if hc.Slow {
			gates[side] = newGate()
			h.gate = gates[side]
		}
		var clh informer.ResourceEventHandler = h
		var cgh cache.ResourceEventHandler = h
		if hc.Filter != nil {
			clh = informer.FilteringResourceEventHandler{FilterFunc: hc.Filter, Handler: h}
			cgh = cache.FilteringResourceEventHandler{FilterFunc: hc.Filter, Handler: h}
		}
		switch logger := crashLogger(w.crashes[side], "handler "+name); {
		case hc.PanicOn != "" && side == 0:
			regs[0], errs[0] = w.CLI.AddEventHandlerWithOptions(clh, informer.HandlerOptions{ResyncPeriod: hc.Resync, Logger: &logger})
		case hc.PanicOn != "":
			regs[1], errs[1] = w.CGI.AddEventHandlerWithOptions(cgh, cache.HandlerOptions{ResyncPeriod: hc.Resync, Logger: &logger})
		case side == 0:
			if hc.Resync != nil {
				regs[0], errs[0] = w.CLI.AddEventHandlerWithResyncPeriod(clh, *hc.Resync)
			} else {
				regs[0], errs[0] = w.CLI.AddEventHandler(clh)
			}
		default:
			if hc.Resync != nil {
				regs[1], errs[1] = w.CGI.AddEventHandlerWithResyncPeriod(cgh, *hc.Resync)
			} else {
				regs[1], errs[1] = w.CGI.AddEventHandler(cgh)
			}
		}
	}
	w.Note("add handler " + name)
	if !w.Compare("AddEventHandler error", errText(errs[0]), errText(errs[1])) || errs[0] != nil {
		return
	}
	w.handlers = append(w.handlers, name)
	w.logs[name], w.regs[name], w.gates[name] = logs, regs, gates
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// RemoveHandler unregisters name on both sides.
func (w *InformerWorld) RemoveHandler(name string) {
	w.T.Helper()
	r := w.regs[name]
	e1 := w.CLI.RemoveEventHandler(r[0].(informer.Registration))
	e2 := w.CGI.RemoveEventHandler(r[1].(cache.ResourceEventHandlerRegistration))
	w.Note("remove handler " + name)
	w.Compare("RemoveEventHandler error", errText(e1), errText(e2))
}

// ReleaseHandler lets a slow handler's pending and future calls through.
func (w *InformerWorld) ReleaseHandler(name string) {
	for _, g := range w.gates[name] {
		g.open()
	}
	w.Note("release handler " + name)
}

// HoldProcessing shuts the index gate: processing of an object labelled
// LabelGate waits until ReleaseProcessing, holding the indexer's lock, so
// state comparisons pause until then. Only for the default stack: a held
// DeltaFIFO also blocks the reflector on the queue's mutex, which a
// synctest bubble cannot wait out.
func (w *InformerWorld) HoldProcessing() {
	for _, g := range w.index {
		g.shut()
	}
	w.held = true
	w.Note("hold processing")
}

// ReleaseProcessing opens the index gate.
func (w *InformerWorld) ReleaseProcessing() {
	for _, g := range w.index {
		g.open()
	}
	w.held = false
	w.Note("release processing")
}

// Start runs both informers and settles.
func (w *InformerWorld) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	clCtx := klog.NewContext(ctx, crashLogger(w.crashes[0], "informer"))
	cgCtx := klog.NewContext(ctx, crashLogger(w.crashes[1], "informer"))
	w.wg.Go(func() { w.CLI.Run(clCtx) })
	w.wg.Go(func() { w.CGI.RunWithContext(cgCtx) })
	w.Note("start")
	w.Settle()
}

// Stop stops both informers, waits for them, and compares IsStopped.
func (w *InformerWorld) Stop() {
	w.T.Helper()
	for _, gs := range w.gates {
		for _, g := range gs {
			if g != nil {
				g.open()
			}
		}
	}
	for _, g := range w.index {
		g.open()
	}
	w.cancel()
	w.wg.Wait()
	w.Compare("IsStopped", w.CLI.IsStopped(), w.CGI.IsStopped())
}

func (w *InformerWorld) compareHandlers() {
	w.T.Helper()
	for _, name := range w.handlers {
		l := w.logs[name]
		cl, cg := sortMapOrderRuns(l[0].Take()), sortMapOrderRuns(l[1].Take())
		if w.Relisted {
			cl, cg = ByKey(cl), ByKey(cg)
		}
		for _, line := range cl {
			w.Note(name + ": " + line)
		}
		w.Compare("handler "+name+" calls", cl, cg)
	}
	cl, cg := w.werr[0].Take(), w.werr[1].Take()
	for _, line := range cl {
		w.Note("watch error handler: " + line)
	}
	w.Compare("WatchErrorHandler calls", cl, cg)
}

var meterName = regexp.MustCompile(`name=meter-[0-9]+`)

// compareMeters compares the instruments each side made and what a
// scrape would see now. Not every value in between: how many deltas one
// pop takes depends on how far the reflector got meanwhile, in both
// implementations, so the number of observations is not compared either.
func (w *InformerWorld) compareMeters() {
	w.T.Helper()
	made := func(m *meter.Meter) (out []string) {
		for _, line := range m.Take() {
			if strings.HasPrefix(line, "new ") {
				out = append(out, line)
			}
		}
		return out
	}
	current := func(m *meter.Meter) map[string]string {
		c := m.Current()
		delete(c, meter.ProcessingLatency)
		return c
	}
	cl, cg := made(w.Meters[0]), made(w.Meters[1])
	for _, line := range cl {
		w.Note("metrics: " + meterName.ReplaceAllString(line, "name=<informer>"))
	}
	w.Compare("metrics made", cl, cg)
	a, b := current(w.Meters[0]), current(w.Meters[1])
	w.Note(fmt.Sprintf("metrics: %v", a))
	w.Compare("metrics", a, b)
}

// compareCrashes compares what panics logged on each side (P14, F8).
func (w *InformerWorld) compareCrashes() {
	w.T.Helper()
	cl, cg := w.crashes[0].Take(), w.crashes[1].Take()
	for _, line := range cl {
		w.Note("log: " + line)
	}
	w.Compare("panics logged", cl, cg)
}

// InformerState is what the comparison sees of an informer at rest.
type InformerState struct {
	Indexer     []string // key@rv, sorted
	StoreRV     string
	LastSyncRV  string
	HasSynced   bool
	Registered  map[string]bool // registration HasSynced
	NamespaceNS []string        // namespace index values, sorted
}

// State returns both sides' states.
func (w *InformerWorld) State() (cl, cg InformerState) {
	cl = InformerState{Indexer: sortedDescribe(w.CLI.GetIndexer().List()), StoreRV: w.CLI.GetIndexer().LastStoreSyncResourceVersion(),
		LastSyncRV: w.CLI.LastSyncResourceVersion(), HasSynced: w.CLI.HasSynced(), Registered: map[string]bool{},
		NamespaceNS: Sorted(w.CLI.GetIndexer().ListIndexFuncValues(store.NamespaceIndex))}
	cg = InformerState{Indexer: sortedDescribe(w.CGI.GetIndexer().List()), StoreRV: w.CGI.GetIndexer().LastStoreSyncResourceVersion(),
		LastSyncRV: w.CGI.LastSyncResourceVersion(), HasSynced: w.CGI.HasSynced(), Registered: map[string]bool{},
		NamespaceNS: Sorted(w.CGI.GetIndexer().ListIndexFuncValues(cache.NamespaceIndex))}
	for _, name := range w.handlers {
		if w.IgnoreRegistrationSync {
			break
		}
		r := w.regs[name]
		cl.Registered[name] = r[0].(informer.Registration).HasSynced()
		cg.Registered[name] = r[1].(cache.ResourceEventHandlerRegistration).HasSynced()
	}
	return cl, cg
}

func (w *InformerWorld) compareState() {
	w.T.Helper()
	if w.held {
		return // the indexer's lock is held by the gated index function
	}
	cl, cg := w.State()
	if w.ignoreStoreRV {
		cl.StoreRV, cg.StoreRV = "(ignored)", "(ignored)"
	}
	w.Note(fmt.Sprintf("state: indexer=%v storeRV=%s lastSyncRV=%s synced=%v handlers=%v", cl.Indexer, cl.StoreRV, cl.LastSyncRV, cl.HasSynced, cl.Registered))
	w.Compare("informer state", cl, cg)
}

func sortedDescribe(objs []any) []string {
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = Describe(o)
	}
	sort.Strings(out)
	return out
}

// sortMapOrderRuns sorts the runs of handler calls whose order comes from
// a map in both implementations: initial-list adds (watch-list and late
// handlers), tombstone deletes of a relist (P3), and sync updates (P4).
func sortMapOrderRuns(lines []string) []string {
	class := func(s string) string {
		switch {
		case strings.HasPrefix(s, "OnAdd") && strings.HasSuffix(s, "initial"):
			return "initial-add"
		case strings.HasPrefix(s, "OnDelete Tombstone"):
			return "tombstone"
		case strings.HasPrefix(s, "OnUpdate") && strings.HasSuffix(s, "(sync)"):
			return "sync"
		}
		return ""
	}
	out := append([]string(nil), lines...)
	for i := 0; i < len(out); {
		j := i + 1
		c := class(out[i])
		for c != "" && j < len(out) && class(out[j]) == c {
			j++
		}
		sort.Strings(out[i:j])
		i = j
	}
	return out
}

// ByKey orders a relist step's calls by object key, keeping the order of
// each key's own calls: a relist delivers its objects in map order
// (watch-list's temporary store, ReplacedAll's tombstones), so only the
// per-key order is comparable.
func ByKey(lines []string) []string {
	key := func(s string) string {
		_, rest, _ := strings.Cut(s, " ")
		rest = strings.TrimPrefix(rest, "Tombstone(")
		k, _, _ := strings.Cut(rest, "@")
		k, _, _ = strings.Cut(k, ":")
		return k
	}
	out := append([]string(nil), lines...)
	sort.SliceStable(out, func(i, j int) bool { return key(out[i]) < key(out[j]) })
	return out
}

// recHandler records calls; it is a handler of both implementations.
type recHandler struct {
	log     *Log
	gate    *gate
	name    string
	panicOn string // key of the object whose calls panic
}

func (h *recHandler) OnAdd(obj any, initial bool) {
	h.gate.pass()
	suffix := ""
	if initial {
		suffix = " initial"
	}
	h.record(obj, "OnAdd %s%s", Describe(obj), suffix)
}

func (h *recHandler) OnUpdate(old, obj any) {
	h.gate.pass()
	suffix := ""
	if rvOf(old) == rvOf(obj) {
		suffix = " (sync)"
	}
	h.record(obj, "OnUpdate %s -> %s%s", Describe(old), Describe(obj), suffix)
}

func (h *recHandler) OnDelete(obj any) {
	h.gate.pass()
	h.record(obj, "OnDelete %s", Describe(obj))
}

// record logs a call, and panics after it if the call is about panicOn.
func (h *recHandler) record(obj any, format string, args ...any) {
	h.log.Add(format, args...)
	if h.panicOn != "" && keyOf(obj) == h.panicOn {
		h.log.Add("(panics)")
		panic(fmt.Sprintf("handler %s: "+format, append([]any{h.name}, args...)...))
	}
}

// keyOf is obj's namespace/name, tombstones included.
func keyOf(obj any) string {
	if t, ok := Norm(obj).(Tombstone); ok {
		return t.Key
	}
	k, _ := cache.MetaNamespaceKeyFunc(obj)
	return k
}

// panicIndex is an index function that panics on the object with key.
func panicIndex(key string) func(any) ([]string, error) {
	return func(obj any) ([]string, error) {
		if keyOf(obj) == key {
			panic("index function: " + key)
		}
		return nil, nil
	}
}

func rvOf(obj any) string {
	m, err := meta.Accessor(obj)
	if err != nil {
		return "?"
	}
	return m.GetResourceVersion()
}

// gate blocks callers while shut. A nil gate never blocks.
type gate struct {
	mu sync.Mutex
	ch chan struct{} // nil when open
}

func newGate() *gate { return &gate{ch: make(chan struct{})} }

func (g *gate) shut() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ch == nil {
		g.ch = make(chan struct{})
	}
}

func (g *gate) open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ch != nil {
		close(g.ch)
		g.ch = nil
	}
}

func (g *gate) pass() {
	if g == nil {
		return
	}
	g.mu.Lock()
	ch := g.ch
	g.mu.Unlock()
	if ch != nil {
		<-ch
	}
}

// indexFunc indexes nothing, but waits at the gate for objects labelled
// LabelGate.
func (g *gate) indexFunc(obj any) ([]string, error) {
	if m, err := meta.Accessor(obj); err == nil && m.GetLabels()[LabelGate] != "" {
		g.pass()
	}
	return nil, nil
}
