package informer_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/cachelab/cachelab/informer"
	dt "github.com/cachelab/cachelab/internal/difftest"
)

// client-go: shared_informer.go WaitFor, DoneChecker, IsDone,
// HasSyncedChecker of the informer and of a registration (v0.36; P16):
// WaitFor reacts without polling, returns what client-go returns, and
// logs the same lines with the same checker names, both when everything
// syncs and when the context ends first (a handler that holds in its
// initial add keeps its registration from syncing). Every line says it
// was logged where WaitFor was called (client-go: logr's
// WithCallStackHelper), for a sink that counts frames (klog's) and for
// one that skips helpers (ktesting's). (P22)
func TestWaitFor(t *testing.T) {
	for _, mode := range []struct {
		name string
		mode dt.SiteMode
	}{{"call depth", dt.CallDepth}, {"call stack helper", dt.CallStackHelper}} {
		t.Run(mode.name, func(t *testing.T) { testWaitFor(t, mode.mode) })
	}
}

// waitFor calls a WaitFor: both sides' from this one line, which is
// where their log lines must say they were logged.
func waitFor[C any](wait func(context.Context, string, ...C) bool, ctx context.Context, what string, checkers ...C) bool {
	return wait(ctx, what, checkers...)
}

func testWaitFor(t *testing.T, mode dt.SiteMode) {
	synctest.Test(t, func(t *testing.T) {
		type outcome struct {
			BeforeStart, Synced, TimedOut bool
			IsDoneBefore, IsDoneAfter     bool
			Log                           []string
		}
		got := map[string]outcome{}
		for _, impl := range []string{"cachelab", "client-go"} {
			srv := dt.NewServer()
			srv.Write("ADDED", pod("ns/a"))
			var o outcome
			log := &dt.Log{}
			logger := dt.SiteLogger(log, mode)
			ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logger))
			held := &gatedHandler{release: make(chan struct{})}
			calm := calmHandler{}
			var checkers, heldChecker func() []any
			var run func()
			if impl == "cachelab" {
				inf := informer.New(srv, informer.Options{ExampleObject: &unstructured.Unstructured{}})
				r1, _ := inf.AddEventHandler(calm)
				r2, _ := inf.AddEventHandler(held)
				checkers = func() []any { return []any{inf.HasSyncedChecker(), r1.HasSyncedChecker()} }
				heldChecker = func() []any { return []any{r2.HasSyncedChecker()} }
				run = func() { inf.Run(ctx) }
			} else {
				inf := cache.NewSharedIndexInformer(srv, &unstructured.Unstructured{}, 0, cache.Indexers{})
				r1, _ := inf.AddEventHandler(calm)
				r2, _ := inf.AddEventHandler(held)
				checkers = func() []any { return []any{inf.HasSyncedChecker(), r1.HasSyncedChecker()} }
				heldChecker = func() []any { return []any{r2.HasSyncedChecker()} }
				run = func() { inf.RunWithContext(ctx) }
			}
			wait := func(ctx context.Context, what string, cs []any) bool {
				if impl == "cachelab" {
					var in []informer.DoneChecker
					for _, c := range cs {
						in = append(in, c.(informer.DoneChecker))
					}
					return waitFor(informer.WaitFor, ctx, what, in...)
				}
				var in []cache.DoneChecker
				for _, c := range cs {
					in = append(in, c.(cache.DoneChecker))
				}
				return waitFor(cache.WaitFor, ctx, what, in...)
			}
			isDone := func(c any) bool {
				if impl == "cachelab" {
					return informer.IsDone(c.(informer.DoneChecker))
				}
				return cache.IsDone(c.(cache.DoneChecker))
			}
			short, cancelShort := context.WithTimeout(ctx, time.Second)
			o.BeforeStart = wait(short, "caches before start", checkers())
			cancelShort()
			o.IsDoneBefore = isDone(checkers()[0])
			done := make(chan struct{})
			go func() { defer close(done); run() }()
			o.Synced = wait(ctx, "caches", checkers())
			o.IsDoneAfter = isDone(checkers()[0])
			short, cancelShort = context.WithTimeout(ctx, time.Second)
			o.TimedOut = !wait(short, "the held handler", heldChecker())
			cancelShort()
			close(held.release)
			cancel()
			<-done
			// The "Done waiting" lines of one wait come in the order the
			// checkers' goroutines report, which neither side fixes.
			o.Log = dt.Sorted(log.All())
			got[impl] = o
		}
		if d := cmp.Diff(got["client-go"], got["cachelab"]); d != "" {
			t.Errorf("WaitFor (-client-go +cachelab):\n%s", d)
		}
		for _, l := range got["client-go"].Log {
			t.Log(l)
		}
	})
}

// calmHandler does nothing, at once.
type calmHandler struct{}

func (calmHandler) OnAdd(any, bool)   {}
func (calmHandler) OnUpdate(_, _ any) {}
func (calmHandler) OnDelete(any)      {}

func onAddNamed(any)         {}
func onDeleteNamed(any)      {}
func onUpdateNamed(_, _ any) {}

// client-go: event_handler_name.go nameForHandler (P16): a registration's
// checker is named after its handler: handler funcs by their functions,
// anything else by its type.
func TestHandlerCheckerNames(t *testing.T) {
	closure := func(any) {}
	cases := []struct {
		name string
		cl   informer.ResourceEventHandler
		cg   cache.ResourceEventHandler
	}{
		{"type", calmHandler{}, calmHandler{}},
		{"pointer", &gatedHandler{}, &gatedHandler{}},
		{"funcs in one place", informer.ResourceEventHandlerFuncs{AddFunc: onAddNamed, DeleteFunc: onDeleteNamed},
			cache.ResourceEventHandlerFuncs{AddFunc: onAddNamed, DeleteFunc: onDeleteNamed}},
		{"funcs and a closure", &informer.ResourceEventHandlerFuncs{AddFunc: closure, UpdateFunc: onUpdateNamed},
			&cache.ResourceEventHandlerFuncs{AddFunc: closure, UpdateFunc: onUpdateNamed}},
	}
	for _, c := range cases {
		cl := informer.New(dt.NewServer(), informer.Options{ExampleObject: &unstructured.Unstructured{}})
		cg := cache.NewSharedIndexInformer(dt.NewServer(), &unstructured.Unstructured{}, 0, cache.Indexers{})
		r1, _ := cl.AddEventHandler(c.cl)
		r2, _ := cg.AddEventHandler(c.cg)
		if a, b := r1.HasSyncedChecker().Name(), r2.HasSyncedChecker().Name(); a != b {
			t.Errorf("%s: cachelab names it %q, client-go %q", c.name, a, b)
		}
	}
}
