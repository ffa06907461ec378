package sim

// Shared informer factories in a scenario (factory, informer,
// factory-start, factory-wait): on each side a real factory, cachelab's
// factory/ and client-go's informers.SharedInformerFactory, decides which
// informers exist, which one a request gets, which ones a Start runs and
// what WaitForCacheSync returns (I1-I4). The informer each factory makes
// is the simulator's, built as start builds it, given to the factory
// through InformerFor, as a controller gives a factory an informer of its
// own making: so it runs on the scenario's clock and connection and is
// traced like start's. A factory makes one informer per resource
// (informer a, informer a configmaps), each traced as <factory>/<resource>;
// two factories make two of the same resource.

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime/pprof"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/factory"
	"github.com/cachelab/cachelab/informer"
	"github.com/cachelab/cachelab/internal/goroutines"
	"github.com/cachelab/cachelab/sim/scenario"
	"github.com/cachelab/cachelab/sim/trace"
	"github.com/cachelab/cachelab/sim/world"
)

// clFactory is what the simulator uses of cachelab's factory: a test
// puts a faulty one in its place (Options.factoryPlant).
type clFactory interface {
	InformerFor(gvr schema.GroupVersionResource, newFunc factory.NewInformerFunc) *informer.SharedIndexInformer
	Start(ctx context.Context)
	WaitForCacheSync(ctx context.Context) map[schema.GroupVersionResource]bool
	Shutdown()
}

// simFactory is one factory of the scenario: cachelab's and client-go's.
type simFactory struct {
	name string
	cfg  startConfig // its namespace and selectors, and its default resync
	cl   clFactory
	cg   world.ClientGoFactory
	// ctx is what each side's Start runs its informers in (cachelab's,
	// client-go's); stop cancels them.
	ctx    [2]context.Context
	cancel [2]context.CancelFunc
	// informers are the informers it has made, each as its two sides,
	// in the order first asked for.
	informers []*facInformer
	// types are the Go types client-go's factory keys its informers by
	// (InformerFor's object: *v1.Pod for pods), each with the resource.
	types  map[reflect.Type]string
	starts int     // how often factory-start ran
	shut   [2]bool // Shutdown ran (stop)
}

// facInformer is one informer a factory made: of one resource, as the
// scenario names it.
type facInformer struct {
	resource string
	sides    [2]*side
}

// informer is the factory's informer of resource, or nil.
func (f *simFactory) informer(resource string) *facInformer {
	for _, fi := range f.informers {
		if fi.resource == resource {
			return fi
		}
	}
	return nil
}

// label is how the trace names the factory's informer of resource.
func (f *simFactory) label(resource string) string { return f.name + "/" + resource }

// shutdown is one side's Shutdown, once: it waits for the goroutines the
// factory's Start ran its informers on, which end with their context.
func (f *simFactory) shutdown(impl string) {
	i := implIndex(impl)
	if f.shut[i] {
		return
	}
	f.shut[i] = true
	f.cancel[i]()
	if i == 0 {
		f.cl.Shutdown()
	} else {
		f.cg.Shutdown()
	}
}

func implIndex(impl string) int {
	if impl == trace.Cachelab {
		return 0
	}
	return 1
}

// cmdFactory is factory NAME: a factory on each side, with nothing in it.
func cmdFactory(r *runner, a scenario.Args) error {
	name := a.Pos[0]
	switch {
	case r.factories[name] != nil:
		return fmt.Errorf("factory %s exists already", name)
	case len(r.factories) >= scenario.MaxFactories:
		return fmt.Errorf("a scenario has at most %d factories", scenario.MaxFactories)
	}
	cfg := r.scopeArgs(a)
	f := &simFactory{name: name, cfg: cfg}
	// The factories' own options are not used: the informer they make
	// through InformerFor is the simulator's, which lists with cfg's
	// namespace and selectors (client-go's typed factory does not apply
	// its namespace or tweak to an InformerFor informer either).
	f.cl = factory.New(nil, cfg.resync)
	if r.opts.factoryPlant != nil {
		f.cl = r.opts.factoryPlant(f.cl)
	}
	f.cg = r.full.NewClientGoFactory(cfg.resync)
	for i := range f.ctx {
		f.ctx[i], f.cancel[i] = context.WithCancel(context.Background())
	}
	if r.factories == nil {
		r.factories = map[string]*simFactory{}
	}
	r.factories[name] = f
	r.note(trace.LayerSim, "", fmt.Sprintf("factory %s on each side (cachelab's factory.New, client-go's NewSharedInformerFactory): %s",
		name, describeScope(cfg)))
	return nil
}

// describeScope says what a factory's informers list, and their resync.
func describeScope(cfg startConfig) string {
	var parts []string
	if cfg.namespace == "" {
		parts = append(parts, "all namespaces")
	} else {
		parts = append(parts, "namespace "+cfg.namespace)
	}
	if cfg.labels != "" {
		parts = append(parts, "labels "+cfg.labels)
	}
	if cfg.fields != "" {
		parts = append(parts, "fields "+cfg.fields)
	}
	if cfg.resync > 0 {
		parts = append(parts, "default resync "+cfg.resync.String())
	} else {
		parts = append(parts, "no resync")
	}
	return strings.Join(parts, ", ")
}

// cmdInformer is informer FACTORY [RESOURCE]: ask each side's factory
// for its informer of the resource (pods unless named). The first
// request makes it; a later one gets the same.
func cmdInformer(r *runner, a scenario.Args) error {
	f := r.factories[a.Pos[0]]
	if f == nil {
		return fmt.Errorf("no factory named %q (make it with factory %s)", a.Pos[0], a.Pos[0])
	}
	resource := a.Resource
	res := r.resourceNamed(resource)
	fi := f.informer(resource)
	first := fi == nil
	if first {
		if len(r.sides) >= maxSides {
			return fmt.Errorf("a run has at most %d informers", maxSides/2)
		}
		pair, err := r.newPair(f.label(resource), res)
		if err != nil {
			return err
		}
		for _, s := range pair {
			s.fac = f
		}
		fi = &facInformer{resource: resource, sides: [2]*side{pair[0], pair[1]}}
		f.informers = append(f.informers, fi)
		r.sides = append(r.sides, pair...)
	}
	jitter := newBackoffJitter()
	var buildErr error
	// build makes a side's informer as its factory asks, with the
	// resync period the factory gives it.
	build := func(s *side, resync time.Duration) bool {
		cfg := f.cfg
		cfg.res = res
		cfg.resync = resync
		s.jitter = jitter
		s.conn.StartInformer(cfg.labels, cfg.fields, cfg.namespace)
		buildErr = s.build(cfg, r.opts.Seed)
		return buildErr == nil
	}
	cl, cg := fi.sides[0], fi.sides[1]
	gotCL := f.cl.InformerFor(r.resourceOf(resource).GroupVersionResource(), func(_ factory.Client, resync time.Duration) *informer.SharedIndexInformer {
		if !build(cl, resync) {
			return nil
		}
		return cl.inf.(cachelabInformer).inf
	})
	// client-go's typed factory keys an informer by its object's Go
	// type, as its generated informers ask with &v1.Pod{}: so does this.
	typed := r.full.TypedObject(res.GroupVersionKind())
	if f.types == nil {
		f.types = map[reflect.Type]string{}
	}
	f.types[reflect.TypeOf(typed)] = resource
	gotCG := f.cg.InformerFor(typed, func(resync time.Duration) cache.SharedIndexInformer {
		if !build(cg, resync) {
			return nil
		}
		ci := cg.inf.(clientGoInformer)
		return loopInformer{ci.inf, ci.loop, cg.id}
	})
	if buildErr != nil {
		return buildErr
	}
	// What each factory handed out, in each side's trace: the same
	// informer for every request is what sharing is (I1).
	for _, s := range fi.sides {
		same := false
		switch inf := s.inf.(type) {
		case cachelabInformer:
			same = gotCL == inf.inf
		case clientGoInformer:
			li, ok := gotCG.(loopInformer)
			same = ok && li.SharedIndexInformer == inf.inf
		}
		what := "ForResource(" + resource + "): a new informer"
		switch {
		case !same:
			what = "ForResource(" + resource + "): an informer other than the one it made before (not shared)"
		case !first:
			what = "ForResource(" + resource + "): the same informer as before (shared)"
		}
		s.rec.Add(trace.LayerNote, trace.KindNote, "", what)
	}
	switch {
	case first && f.starts > 0:
		r.note(trace.LayerSim, "", fmt.Sprintf("factory %s makes its %s informer after Start ran: it does not run until Start is called again", f.name, resource))
	case first:
		r.note(trace.LayerSim, "", fmt.Sprintf("factory %s makes its %s informer; it runs at the factory's next Start", f.name, resource))
	}
	return nil
}

// cmdFactoryStart is factory-start FACTORY: Start on each side. It runs
// the informers asked for since the last Start, and only those (I2).
func cmdFactoryStart(r *runner, a scenario.Args) error {
	f := r.factories[a.Pos[0]]
	if f == nil {
		return fmt.Errorf("no factory named %q (make it with factory %s)", a.Pos[0], a.Pos[0])
	}
	f.starts++
	// The informers Start runs now, and those it runs already: Start
	// runs every informer asked for since the last Start, and only those.
	var fresh, running []*facInformer
	for _, fi := range f.informers {
		if fi.sides[0].running {
			running = append(running, fi)
		} else {
			fresh = append(fresh, fi)
		}
	}
	switch {
	case f.shut[0]:
		r.note(trace.LayerSim, "", fmt.Sprintf("factory %s: Start starts nothing: stop shut the factory down (I4)", f.name))
	case len(f.informers) == 0:
		r.note(trace.LayerSim, "", fmt.Sprintf("factory %s: Start starts nothing: no informer has been asked for yet", f.name))
	case len(fresh) == 0:
		r.note(trace.LayerSim, "", fmt.Sprintf("factory %s: Start starts nothing new: %s", f.name, describeInformers(running, "runs already", "run already")))
	case len(running) == 0:
		r.note(trace.LayerSim, "", fmt.Sprintf("factory %s: Start runs %s", f.name, describeInformers(fresh, "", "")))
	default:
		r.note(trace.LayerSim, "", fmt.Sprintf("factory %s: Start runs %s, not %s", f.name, describeInformers(fresh, "", ""),
			describeInformers(running, "which runs already", "which run already")))
	}
	if len(f.informers) == 0 {
		f.cl.Start(f.ctx[0])
		f.cg.StartWithContext(f.ctx[1])
		return nil
	}
	// Start runs the informers on goroutines of its own; each informer
	// labels its goroutines as its side's (the informer's Labels, and
	// loopInformer) as it begins to run, so settling tells them apart.
	first := f.informers[0]
	first.sides[0].do(func() { f.cl.Start(f.ctx[0]) })
	first.sides[1].do(func() { f.cg.StartWithContext(f.ctx[1]) })
	// Whether each side's informer runs now is its factory's doing: a
	// side whose informer does not start when the world says it should
	// says so, and the comparison sees it.
	for _, fi := range f.informers {
		expected := !fi.sides[0].running && !f.shut[0]
		for _, s := range fi.sides {
			switch {
			case s.running:
			case expected && r.started(s):
				s.running = true
			case expected:
				s.rec.Add(trace.LayerNote, trace.KindNote, "", "Start did not run the informer")
			case s.inf.hasStarted():
				s.rec.Add(trace.LayerNote, trace.KindNote, "", "Start ran an informer it should not have")
				s.running = true
			}
		}
		if cl, cg := fi.sides[0], fi.sides[1]; cl.running != cg.running {
			// One side's informer runs and the other's does not: what the
			// running one does next is not settled against anything, so the
			// run ends here, with what each factory did.
			return &trace.Divergence{Layer: "state", Diff: fmt.Sprintf("factory %s's Start: the %s informer runs (-cachelab +client-go):\n-%t\n+%t",
				f.name, fi.resource, cl.running, cg.running)}
		}
	}
	return r.startWaitingControllers()
}

// describeInformers names a factory's informers in a sentence: "its pods
// informer", "its pods and configmaps informers", followed by verb1 (for
// one) or verbN (for several) if not "".
func describeInformers(fis []*facInformer, verb1, verbN string) string {
	names := make([]string, len(fis))
	for i, fi := range fis {
		names[i] = fi.resource
	}
	out := "its " + names[0] + " informer"
	verb := verb1
	if len(names) > 1 {
		out = "its " + strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1] + " informers"
		verb = verbN
	}
	if verb != "" {
		out += " " + verb
	}
	return out
}

// started waits, within the settle timeout, for s's informer to begin to
// run: a factory's Start runs it on a goroutine of its own.
func (r *runner) started(s *side) bool {
	deadline := time.Now().Add(r.opts.SettleTimeout)
	for !s.inf.hasStarted() {
		if time.Now().After(deadline) {
			return false
		}
		select {
		case <-time.After(time.Millisecond):
		case <-r.ctx.Done():
			return false
		}
	}
	return true
}

// errNoWait is why factory-wait's WaitForCacheSync does not wait: the
// step has settled, so what it returns now is what it would return.
var errNoWait = errors.New("the scenario reads WaitForCacheSync's answer once the step has settled")

// cmdFactoryWait is factory-wait FACTORY: what each side's
// WaitForCacheSync returns once the step has settled (I3). It is called
// with a context already ended: every informer that can sync has, and one
// that has not would keep a real WaitForCacheSync waiting.
func cmdFactoryWait(r *runner, a scenario.Args) error {
	f := r.factories[a.Pos[0]]
	if f == nil {
		return fmt.Errorf("no factory named %q (make it with factory %s)", a.Pos[0], a.Pos[0])
	}
	if err := r.settle(); err != nil {
		return err
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errNoWait)
	var synced [2]map[string]bool
	synced[0] = map[string]bool{}
	for gvr, ok := range f.cl.WaitForCacheSync(ctx) {
		synced[0][gvr.Resource] = ok
	}
	synced[1] = map[string]bool{}
	for typ, ok := range f.cg.WaitForCacheSync(ctx.Done()) {
		if res, known := f.types[typ]; known {
			synced[1][res] = ok
		} else {
			synced[1][typ.String()] = ok
		}
	}
	for i, impl := range []string{trace.Cachelab, trace.ClientGo} {
		rec := r.sides[0].rec
		if impl == trace.ClientGo {
			rec = r.sides[1].rec
		}
		if len(f.informers) > 0 {
			rec = f.informers[0].sides[i].rec
		}
		rec.Add(trace.LayerSynced, trace.KindSynced, "", fmt.Sprintf("factory %s: WaitForCacheSync returns %s", f.name, describeSynced(synced[i])))
	}
	return nil
}

// describeSynced is a WaitForCacheSync answer in words.
func describeSynced(m map[string]bool) string {
	if len(m) == 0 {
		return "{} at once: none of its informers has been started"
	}
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	var parts []string
	waiting := false
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("%s=%t", n, m[n]))
		waiting = waiting || !m[n]
	}
	out := "{" + strings.Join(parts, " ") + "}"
	if waiting {
		out += " (not synced: a real WaitForCacheSync would still be waiting)"
	}
	return out
}

// loopInformer is client-go's informer as the factory runs it: it notes
// the goroutine Run runs on, which settling reads (clientGoInformer.drained),
// and labels it as its side's (side), so that every goroutine the
// informer starts is the side's, whichever side's goroutine ran the
// factory's Start.
type loopInformer struct {
	cache.SharedIndexInformer
	loop *atomic.Value
	side string
}

func (l loopInformer) Run(stop <-chan struct{}) {
	l.begin()
	l.SharedIndexInformer.Run(stop)
}

func (l loopInformer) RunWithContext(ctx context.Context) {
	l.begin()
	l.SharedIndexInformer.RunWithContext(ctx)
}

func (l loopInformer) begin() {
	pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), pprof.Labels(sideLabel, l.side)))
	l.loop.Store(goroutines.Current())
}
