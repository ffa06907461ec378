package factory_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/factory"
	"github.com/cachelab/cachelab/informer"
	dt "github.com/cachelab/cachelab/internal/difftest"
	"github.com/cachelab/cachelab/internal/dynclient"
	"github.com/cachelab/cachelab/internal/requestlog"
	"github.com/cachelab/cachelab/internal/testdeadline"
	"github.com/cachelab/cachelab/listwatch"
	"github.com/cachelab/cachelab/metrics"
	"github.com/cachelab/cachelab/reflector"
	"github.com/cachelab/cachelab/store"
)

var (
	pods       = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	resources  = map[schema.GroupVersionResource]listwatch.Resource{
		pods:       listwatch.Pods,
		configMaps: {Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespaced: true},
	}
)

// world is one embedded etcd that both sides' factories list and watch,
// each through its own connections (client-go's through a dynamic client
// over the same ListerWatcher, internal/dynclient), and a log of the
// requests each side sent.
type world struct {
	ctx      context.Context
	e        *listwatch.Embedded
	cl, cg   *requestlog.Log
	writers  map[schema.GroupVersionResource]*listwatch.Writer
	clClient factory.Client
	cgClient dynamic.Interface
}

func newWorld(t testing.TB) *world {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	e, err := listwatch.StartEmbedded(ctx, listwatch.EmbeddedOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	w := &world{ctx: ctx, e: e, cl: &requestlog.Log{}, cg: &requestlog.Log{}, writers: map[schema.GroupVersionResource]*listwatch.Writer{}}
	for gvr, res := range resources {
		w.writers[gvr] = listwatch.NewWriter(e.Client(), res, listwatch.WriterOptions{})
	}
	w.clClient = func(gvr schema.GroupVersionResource, ns string) reflector.ListerWatcher { return w.lw(w.cl, gvr, ns) }
	w.cgClient = dynclient.New(func(gvr schema.GroupVersionResource, ns string) reflector.ListerWatcher { return w.lw(w.cg, gvr, ns) })
	return w
}

// lw is a ListerWatcher of gvr in ns that writes each request to rec.
func (w *world) lw(rec *requestlog.Log, gvr schema.GroupVersionResource, ns string) *requestlog.ListerWatcher {
	return rec.Wrap(listwatch.NewListerWatcher(w.e.Client(), resources[gvr], listwatch.Options{Namespace: ns}), gvr.Resource+" ns="+ns)
}

// create writes an object of gvr ("ns/name") with labels.
func (w *world) create(t testing.TB, gvr schema.GroupVersionResource, key string, labels ...string) {
	t.Helper()
	o := dt.Pod(key)
	o.SetKind(resources[gvr].Kind)
	for i := 0; i+1 < len(labels); i += 2 {
		dt.Label(labels[i], labels[i+1])(o)
	}
	if _, err := w.writers[gvr].Create(w.ctx, o); err != nil {
		t.Fatal(err)
	}
}

// keys is an indexer's keys, sorted.
func keys(list []any) []string {
	var out []string
	for _, o := range list {
		k, _ := cache.MetaNamespaceKeyFunc(o)
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// counter keeps a handler's adds, and tells of each on added (if made).
type counter struct {
	mu    sync.Mutex
	adds  []string
	added chan string
}

func (c *counter) OnAdd(o any, _ bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k, _ := cache.MetaNamespaceKeyFunc(o)
	c.adds = append(c.adds, k)
	if c.added != nil {
		c.added <- k
	}
}
func (c *counter) OnUpdate(any, any) {}
func (c *counter) OnDelete(any)      {}

// Lines is the keys it was given, sorted.
func (c *counter) Lines() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Sorted(slices.Values(c.adds))
}

// One informer per resource, however many ask (I1): two controllers on
// pods share one LIST+WATCH stream and one cache, each with its handler;
// Start starts each informer once, a second Start nothing (I2); a second
// factory shares nothing and doubles the requests (I7).
func TestSharedAcrossRequesters(t *testing.T) {
	w := newWorld(t)
	for _, k := range []string{"ns0/a", "ns0/b", "ns1/c"} {
		w.create(t, pods, k)
	}
	cl, cg := factory.New(w.clClient, 0), dynamicinformer.NewDynamicSharedInformerFactory(w.cgClient, 0)
	same := []bool{cl.ForResource(pods).Informer() == cl.ForResource(pods).Informer(),
		cg.ForResource(pods).Informer() == cg.ForResource(pods).Informer()}
	if d := cmp.Diff([]bool{true, true}, same); d != "" {
		t.Errorf("ForResource twice gives the same informer (cachelab, client-go) (-want +got):\n%s", d)
	}
	clH, cgH := []*counter{{}, {}}, []*counter{{}, {}}
	var clRegs []informer.InformerSynced
	var cgRegs []cache.InformerSynced
	for i := range 2 { // two controllers, each asking the factory
		clReg, err := cl.ForResource(pods).Informer().AddEventHandler(clH[i])
		if err != nil {
			t.Fatal(err)
		}
		cgReg, err := cg.ForResource(pods).Informer().AddEventHandler(cgH[i])
		if err != nil {
			t.Fatal(err)
		}
		clRegs, cgRegs = append(clRegs, clReg.HasSynced), append(cgRegs, cgReg.HasSynced)
	}
	ctx, cancel := context.WithCancel(w.ctx)
	cl.Start(ctx)
	cg.Start(ctx.Done())
	cl.Start(ctx) // again: nothing more to start
	cg.Start(ctx.Done())
	clSynced, cgSynced := cl.WaitForCacheSync(ctx), cg.WaitForCacheSync(ctx.Done())
	if d := cmp.Diff(cgSynced, clSynced); d != "" {
		t.Errorf("WaitForCacheSync (-client-go +cachelab):\n%s", d)
	}
	if d := cmp.Diff(w.cg.Lines(), w.cl.Lines()); d != "" {
		t.Errorf("requests (-client-go +cachelab):\n%s", d)
	}
	// Each controller's handler has had the initial list.
	if !informer.WaitForCacheSync(ctx, nil, clRegs...) || !cache.WaitForCacheSync(ctx.Done(), cgRegs...) {
		t.Fatal("the handlers did not sync")
	}
	if n := len(w.cl.Lines()); n != 1 {
		t.Errorf("cachelab sent %d requests for two controllers on one factory, want one watch-list: %q", n, w.cl.Lines())
	}
	got := [][]string{keys(cl.ForResource(pods).Informer().GetIndexer().List()), clH[0].Lines(), clH[1].Lines()}
	want := [][]string{keys(cg.ForResource(pods).Informer().GetIndexer().List()), cgH[0].Lines(), cgH[1].Lines()}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("the cache and each controller's adds (-client-go +cachelab):\n%s", d)
	}

	// A second factory: its own informer, its own requests.
	cl2, cg2 := factory.New(w.clClient, 0), dynamicinformer.NewDynamicSharedInformerFactory(w.cgClient, 0)
	same = []bool{cl2.ForResource(pods).Informer() == cl.ForResource(pods).Informer(), cg2.ForResource(pods).Informer() == cg.ForResource(pods).Informer()}
	if d := cmp.Diff([]bool{false, false}, same); d != "" {
		t.Errorf("a second factory's informer is the first one's (cachelab, client-go) (-want +got):\n%s", d)
	}
	cl2.Start(ctx)
	cg2.Start(ctx.Done())
	if d := cmp.Diff(cg2.WaitForCacheSync(ctx.Done()), cl2.WaitForCacheSync(ctx)); d != "" {
		t.Errorf("the second factory's WaitForCacheSync (-client-go +cachelab):\n%s", d)
	}
	if d := cmp.Diff(w.cg.Lines(), w.cl.Lines()); d != "" {
		t.Errorf("requests with two factories (-client-go +cachelab):\n%s", d)
	}
	if n := len(w.cl.Lines()); n != 2 {
		t.Errorf("two factories sent %d requests, want two watch-lists: %q", n, w.cl.Lines())
	}
	cancel()
	for _, f := range []func(){cl.Shutdown, cl2.Shutdown, cg.Shutdown, cg2.Shutdown} {
		f()
	}
}

// An informer asked for after Start is not started until the next Start
// (I2): WaitForCacheSync leaves it out (I3), its HasSynced stays false,
// and it sends nothing; the next Start starts it, and only it.
func TestLateInformer(t *testing.T) {
	w := newWorld(t)
	w.create(t, pods, "ns0/a")
	w.create(t, configMaps, "ns0/settings")
	cl, cg := factory.New(w.clClient, 0), dynamicinformer.NewDynamicSharedInformerFactory(w.cgClient, 0)
	cl.ForResource(pods)
	cg.ForResource(pods)
	ctx, cancel := context.WithCancel(w.ctx)
	defer cancel()
	cl.Start(ctx)
	cg.Start(ctx.Done())
	late := []bool{cl.ForResource(configMaps).Informer().HasSynced(), cg.ForResource(configMaps).Informer().HasSynced()}
	type state struct {
		Synced     map[schema.GroupVersionResource]bool
		LateSynced bool
		Requests   []string
	}
	clState := state{cl.WaitForCacheSync(ctx), cl.ForResource(configMaps).Informer().HasSynced(), w.cl.Lines()}
	cgState := state{cg.WaitForCacheSync(ctx.Done()), cg.ForResource(configMaps).Informer().HasSynced(), w.cg.Lines()}
	if d := cmp.Diff(cgState, clState); d != "" {
		t.Errorf("after Start, with configmaps asked for late (-client-go +cachelab):\n%s", d)
	}
	if clState.LateSynced || late[0] || len(clState.Synced) != 1 {
		t.Errorf("cachelab: the late informer synced %v, WaitForCacheSync %v: want it not started and left out", clState.LateSynced, clState.Synced)
	}
	cl.Start(ctx)
	cg.Start(ctx.Done())
	clState = state{cl.WaitForCacheSync(ctx), cl.ForResource(configMaps).Informer().HasSynced(), w.cl.Lines()}
	cgState = state{cg.WaitForCacheSync(ctx.Done()), cg.ForResource(configMaps).Informer().HasSynced(), w.cg.Lines()}
	if d := cmp.Diff(cgState, clState); d != "" {
		t.Errorf("after the second Start (-client-go +cachelab):\n%s", d)
	}
	if !clState.LateSynced || len(clState.Requests) != 2 {
		t.Errorf("cachelab after the second Start: late informer synced %v, requests %q: want it started, once", clState.LateSynced, clState.Requests)
	}
	cancel()
	cl.Shutdown()
	cg.Shutdown()
}

// Shutdown does not stop the informers: it waits for them, which end when
// Start's context does; meanwhile they keep working, and a Start after
// Shutdown starts nothing (I4). A WaitForCacheSync whose context ends
// first says which informers had not synced, and why (I3).
func TestShutdownWaits(t *testing.T) {
	w := newWorld(t)
	w.create(t, pods, "ns0/a")
	cl, cg := factory.New(w.clClient, 0), dynamicinformer.NewDynamicSharedInformerFactory(w.cgClient, 0)
	clH, cgH := &counter{added: make(chan string, 10)}, &counter{added: make(chan string, 10)}
	cl.ForResource(pods).Informer().AddEventHandler(clH)
	cg.ForResource(pods).Informer().AddEventHandler(cgH)
	ctx, cancel := context.WithCancel(w.ctx)
	defer cancel()
	cl.Start(ctx)
	cg.Start(ctx.Done())
	cl.WaitForCacheSync(ctx)
	cg.WaitForCacheSync(ctx.Done())
	clDone, cgDone := make(chan struct{}), make(chan struct{})
	go func() { cl.Shutdown(); close(clDone) }()
	go func() { cg.Shutdown(); close(cgDone) }()

	// Still running: a new pod reaches both handlers.
	w.create(t, pods, "ns0/b")
	bound := testdeadline.Context(t)
	for _, h := range []*counter{clH, cgH} {
		for k := ""; k != "ns0/b"; {
			select {
			case k = <-h.added:
			case <-bound.Done():
				t.Fatalf("the informers stopped hearing after Shutdown: adds %q", h.Lines())
			}
		}
	}
	// Shutdown cannot have returned: the informers' goroutines end only
	// with ctx.
	running := []bool{!closed(clDone), !closed(cgDone)}
	if d := cmp.Diff([]bool{true, true}, running); d != "" {
		t.Errorf("Shutdown is waiting while the informers run (cachelab, client-go) (-want +got):\n%s", d)
	}
	// A Start after Shutdown starts nothing, not even a new informer.
	cl.ForResource(configMaps)
	cg.ForResource(configMaps)
	cl.Start(ctx)
	cg.Start(ctx.Done())
	cancel()
	<-clDone
	<-cgDone
	if d := cmp.Diff(w.cg.Lines(), w.cl.Lines()); d != "" {
		t.Errorf("requests (-client-go +cachelab):\n%s", d)
	}
	if n := len(w.cl.Lines()); n != 1 {
		t.Errorf("cachelab sent %q: want only the pods watch-list, nothing for configmaps started after Shutdown", w.cl.Lines())
	}
}

func closed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// The factory's namespace and list-options tweak go into every request of
// every informer (I5): the cache holds only what they select.
func TestNamespaceAndSelectors(t *testing.T) {
	w := newWorld(t)
	for _, k := range []string{"ns0/a", "ns0/b", "ns1/c"} {
		w.create(t, pods, k, "app", "other")
	}
	w.create(t, pods, "ns0/web", "app", "web")
	w.create(t, configMaps, "ns0/web", "app", "web")
	w.create(t, configMaps, "ns1/web", "app", "web")
	tweak := func(o *metav1.ListOptions) { o.LabelSelector = "app=web" }
	cl := factory.NewFiltered(w.clClient, 0, "ns0", tweak)
	cg := dynamicinformer.NewFilteredDynamicSharedInformerFactory(w.cgClient, 0, "ns0", tweak)
	for _, gvr := range []schema.GroupVersionResource{pods, configMaps} {
		cl.ForResource(gvr)
		cg.ForResource(gvr)
	}
	ctx, cancel := context.WithCancel(w.ctx)
	defer cancel()
	cl.Start(ctx)
	cg.Start(ctx.Done())
	if d := cmp.Diff(cg.WaitForCacheSync(ctx.Done()), cl.WaitForCacheSync(ctx)); d != "" {
		t.Errorf("WaitForCacheSync (-client-go +cachelab):\n%s", d)
	}
	if d := cmp.Diff(w.cg.Lines(), w.cl.Lines()); d != "" {
		t.Errorf("requests (-client-go +cachelab):\n%s", d)
	}
	for _, gvr := range []schema.GroupVersionResource{pods, configMaps} {
		got, want := keys(cl.ForResource(gvr).Informer().GetIndexer().List()), keys(cg.ForResource(gvr).Informer().GetIndexer().List())
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s cache (-client-go +cachelab):\n%s", gvr.Resource, d)
		}
		if !slices.Equal(got, []string{"ns0/web"}) {
			t.Errorf("%s cache %q, want only ns0/web", gvr.Resource, got)
		}
		// The lister answers from the same cache.
		l, err := cl.ForResource(gvr).Lister().ByNamespace("ns0").Get("web")
		if err != nil || l == nil {
			t.Errorf("%s lister: %v", gvr.Resource, err)
		}
	}
	cancel()
	cl.Shutdown()
	cg.Shutdown()
}

// InformerFor, against client-go's typed factory's (informers/factory.go):
// newFunc is called once per resource, with the custom resync period if
// the resource has one and the default otherwise; the factory's transform
// is set on what it makes; the same informer comes back after (I1, I5).
// Start twice logs nothing: it does not run a running informer again (I2).
func TestInformerForAgainstTheTypedFactory(t *testing.T) {
	w := newWorld(t)
	w.create(t, pods, "ns0/a")
	w.create(t, configMaps, "ns0/settings")
	mark := func(o any) (any, error) {
		u := o.(*unstructured.Unstructured).DeepCopy()
		dt.Label("transformed", "yes")(u)
		return u, nil
	}
	var clCalls, cgCalls []string
	cl := factory.New(w.clClient, time.Hour, factory.WithTransform(mark), factory.WithCustomResyncConfig(map[schema.GroupVersionResource]time.Duration{configMaps: time.Minute}))
	cg := informers.NewSharedInformerFactoryWithOptions(nil, time.Hour, informers.WithTransform(mark),
		informers.WithCustomResyncConfig(map[metav1.Object]time.Duration{&unstructured.Unstructured{}: time.Minute}))
	// client-go's typed factory keys informers by Go type; configmaps here
	// play the one resource of its type with a custom resync.
	clInf := cl.InformerFor(configMaps, func(c factory.Client, resync time.Duration) *informer.SharedIndexInformer {
		clCalls = append(clCalls, resync.String())
		return informer.New(c(configMaps, ""), informer.Options{ResyncPeriod: resync, Indexers: store.Indexers{}})
	})
	cgInf := cg.InformerFor(&unstructured.Unstructured{}, func(_ kubernetes.Interface, resync time.Duration) cache.SharedIndexInformer {
		cgCalls = append(cgCalls, resync.String())
		return cache.NewSharedIndexInformer(w.lw(w.cg, configMaps, ""), &unstructured.Unstructured{}, resync, cache.Indexers{})
	})
	again := []bool{cl.InformerFor(configMaps, nil) == clInf, cg.InformerFor(&unstructured.Unstructured{}, nil) == cgInf}
	if d := cmp.Diff([]bool{true, true}, again); d != "" {
		t.Errorf("InformerFor twice gives the same informer (cachelab, client-go) (-want +got):\n%s", d)
	}
	if d := cmp.Diff(cgCalls, clCalls); d != "" {
		t.Errorf("newFunc calls and their resync periods (-client-go +cachelab):\n%s", d)
	}
	var clLog, cgLog logLines
	ctx, cancel := context.WithCancel(w.ctx)
	defer cancel()
	cl.Start(logr.NewContext(ctx, clLog.logger()))
	cg.StartWithContext(logr.NewContext(ctx, cgLog.logger()))
	clRes, cgRes := cl.WaitForCacheSyncWithContext(ctx), cg.WaitForCacheSyncWithContext(ctx)
	if clRes.Err != nil || cgRes.Err != nil || len(clRes.Synced) != len(cgRes.Synced) {
		t.Errorf("WaitForCacheSyncWithContext: cachelab %+v, client-go %+v", clRes, cgRes)
	}
	cl.Start(logr.NewContext(ctx, clLog.logger()))
	cg.StartWithContext(logr.NewContext(ctx, cgLog.logger()))
	transformed := func(list []any) []string {
		var out []string
		for _, o := range list {
			out = append(out, o.(*unstructured.Unstructured).GetLabels()["transformed"])
		}
		return out
	}
	got := []any{transformed(clInf.GetIndexer().List()), w.cl.Lines()}
	want := []any{transformed(cgInf.GetIndexer().List()), w.cg.Lines()}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("the cache's transformed objects and the requests (-client-go +cachelab):\n%s", d)
	}
	cancel()
	cl.Shutdown()
	cg.Shutdown()
	if d := cmp.Diff(cgLog.warnings(), clLog.warnings()); d != "" {
		t.Errorf("what Start logged at warning level or above (-client-go +cachelab):\n%s", d)
	}
}

// logLines keeps what a logger was told, for one side.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.lines = append(l.lines, prefix+" "+args)
	}, funcr.Options{Verbosity: 0})
}

// warnings are the lines about running an informer twice.
func (l *logLines) warnings() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, s := range l.lines {
		if strings.Contains(s, "more than once") || strings.Contains(s, "already") {
			out = append(out, "run twice")
		}
	}
	return out
}

// The informer name of a factory (I6): reserved while the factory lives,
// so that a second one by that name is refused, and released by
// Shutdown, after which the name can be taken again; as client-go's
// typed factory does with its cache.InformerName.
func TestInformerNameReleasedByShutdown(t *testing.T) {
	w := newWorld(t)
	clName, err := metrics.NewInformerName("factory-i6")
	if err != nil {
		t.Fatal(err)
	}
	cgName, err := cache.NewInformerName("factory-i6")
	if err != nil {
		t.Fatal(err)
	}
	cl := factory.New(w.clClient, 0, factory.WithInformerName(clName))
	cg := informers.NewSharedInformerFactoryWithOptions(nil, 0, informers.WithInformerName(cgName))
	cl.ForResource(pods)
	ctx, cancel := context.WithCancel(w.ctx)
	cl.Start(ctx)
	cg.StartWithContext(ctx)
	// taken tries to reserve the name again on each side, and gives back
	// what it got.
	taken := func() []bool {
		clProbe, clErr := metrics.NewInformerName("factory-i6")
		cgProbe, cgErr := cache.NewInformerName("factory-i6")
		if clErr == nil {
			clProbe.Release()
		}
		if cgErr == nil {
			cgProbe.Release()
		}
		return []bool{clErr != nil, cgErr != nil}
	}
	if d := cmp.Diff([]bool{true, true}, taken()); d != "" {
		t.Errorf("while the factory lives, its name is taken (cachelab, client-go) (-want +got):\n%s", d)
	}
	cancel()
	cl.Shutdown()
	cg.Shutdown()
	if d := cmp.Diff([]bool{false, false}, taken()); d != "" {
		t.Errorf("after Shutdown, the name is free (cachelab, client-go) (-want +got):\n%s", d)
	}
}
