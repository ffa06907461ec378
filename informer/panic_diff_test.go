package informer_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/cachelab/cachelab/informer"
	dt "github.com/cachelab/cachelab/internal/difftest"
	"github.com/cachelab/cachelab/store"
)

// Panics (P14, F8). client-go recovers a panic in a handler, in
// processing and in the reflector with utilruntime.HandleCrash*: the panic
// is logged ("Observed a panic") through the logger of the handler or of
// Run's context, utilruntime.PanicHandlers run, and the process crashes
// unless utilruntime.ReallyCrash is false. These tests set it false
// (dt.CatchPanics) and compare, besides everything the world compares,
// what each side logged and which panic handlers ran.

// client-go: shared_informer.go processorListener.run (P14): a handler
// that panics loses that one notification; its next one comes a second
// later; other handlers and the informer go on.
func TestHandlerPanics(t *testing.T) {
	dt.CatchPanics(t)
	inBoth(t, dt.InformerConfig{}, func(w *dt.InformerWorld) {
		w.Create(pod("ns/a"))
		w.AddHandler("h", dt.HandlerConfig{PanicOn: "ns/b"})
		w.AddHandler("calm", dt.HandlerConfig{})
		w.Start()
		w.Create(pod("ns/b"))
		w.Create(pod("ns/c"))
		w.Settle()
		w.Advance(999 * time.Millisecond)
		w.Advance(time.Millisecond)
		w.Update(pod("ns/b", dt.Label("v", "2")))
		w.Delete(pod("ns/c"))
		w.Advance(time.Second)
	}, both(
		"h: OnAdd ns/b@3", "h: (panics)",
		`log: handler h: error "Observed a panic" err=<nil> panic="handler h: OnAdd ns/b@3" stacktrace="(a stack)"`,
		`log: handler h: info "PanicHandler" err=<nil> value="handler h: OnAdd ns/b@3"`,
		"-- 1ms later\nh: OnAdd ns/c@4",
		"calm: OnAdd ns/c@4",
		"h: OnDelete ns/c@6",
	))
}

// client-go: shared_informer.go processorListener.run (P9, P14): an
// initial-list OnAdd that panics is never counted as handled, so the
// registration never reports synced, although the informer has: for a
// handler added late, in both stacks, and for one added before start in
// the default stack. (In the classic stack that one may report synced
// anyway: DeltaFIFO reports the informer synced before its handlers run,
// D6, so the registration can see the sync before its add is counted.)
func TestInitialAddPanicsRegistrationNeverSyncs(t *testing.T) {
	dt.CatchPanics(t)
	inBoth(t, dt.InformerConfig{}, func(w *dt.InformerWorld) {
		w.Create(pod("ns/a"))
		w.Start()
		w.AddHandler("late", dt.HandlerConfig{PanicOn: "ns/a"})
		w.Advance(time.Minute)
	}, both(
		"late: OnAdd ns/a@2 initial", "late: (panics)", "synced=true handlers=map[late:false]",
	))
	inStacks(t, []informer.Stack{informer.Default}, dt.InformerConfig{}, func(w *dt.InformerWorld) {
		w.Create(pod("ns/a"))
		w.AddHandler("h", dt.HandlerConfig{PanicOn: "ns/a"})
		w.Start()
		w.Advance(time.Minute)
	}, both("h: OnAdd ns/a@2 initial", "h: (panics)", "synced=true handlers=map[h:false]"))
}

// client-go: reflector.go list (its LIST on a goroutine of its own, a
// panic raised again on the reflector's), wait.DelayFunc.Until (F8): a
// ListerWatcher that panics once is logged through Run's context, the
// WatchErrorHandler does not hear of it, and the reflector lists again
// after its backoff and syncs. The default stack's first request is a
// watch-list, the classic stack's a LIST.
func TestListerWatcherPanicsOnce(t *testing.T) {
	dt.CatchPanics(t)
	inBoth(t, dt.InformerConfig{}, func(w *dt.InformerWorld) {
		w.Create(pod("ns/a"))
		w.Both("the next LIST and WATCH panic", func(s *dt.Server) {
			s.FailNextList(dt.Panic{Value: "list: boom"})
			s.FailNextWatch(dt.Panic{Value: "watch: boom"})
		})
		w.AddHandler("h", dt.HandlerConfig{})
		w.Start()
		w.Advance(2 * time.Second)
		w.Advance(4 * time.Second)
	}, map[informer.Stack][]string{
		informer.Default: {`log: informer: error "Observed a panic" err=<nil> panic="watch: boom" stacktrace="(a stack)"`,
			`log: informer: info "PanicHandler" err=<nil> value="watch: boom"`, "h: OnAdd ns/a@2 initial", "synced=true handlers=map[h:true]"},
		informer.Classic: {`log: informer: error "Observed a panic" err=<nil> panic="list: boom" stacktrace="(a stack)"`,
			`log: informer: info "PanicHandler" err=<nil> value="list: boom"`, "h: OnAdd ns/a@2 initial", "synced=true handlers=map[h:true]"},
	})
}

// client-go: reflector.go watchHandler, wait.DelayFunc.Until (F8): a
// panic while a watch event is stored (here the transform's) ends the
// watch; the reflector relists after its backoff, and recovers once the
// object no longer makes it panic.
func TestWatchHandlingPanics(t *testing.T) {
	dt.CatchPanics(t)
	inBoth(t, dt.InformerConfig{Transform: true}, func(w *dt.InformerWorld) {
		w.Create(pod("ns/a"))
		w.AddHandler("h", dt.HandlerConfig{})
		w.Start()
		w.Create(pod("ns/b", dt.Label(dt.LabelTransformPanics, "y")))
		w.Settle()
		w.Update(pod("ns/b"))
		w.Advance(2 * time.Second)
		w.Advance(4 * time.Second)
	}, both(
		`log: informer: error "Observed a panic" err=<nil> panic="transform: ns/b" stacktrace="(a stack)"`,
		"h: OnAdd ns/b@4",
	))
}

// client-go: controller.go RunWithContext, wait.UntilWithContext (P14): a
// panic while processing (here an index function's) loses the rest of
// the item being processed; processing starts again a second later. The
// object stays in the cache, unindexed (S3): the store writes it before
// it indexes it.
func TestProcessingPanics(t *testing.T) {
	dt.CatchPanics(t)
	inBoth(t, dt.InformerConfig{PanicIndexOn: "ns/b"}, func(w *dt.InformerWorld) {
		w.Create(pod("ns/a"))
		w.AddHandler("h", dt.HandlerConfig{})
		w.Start()
		w.Create(pod("ns/b"))
		w.Settle()
		w.Create(pod("ns/c"))
		w.Settle()
		w.Advance(time.Second)
		w.Delete(pod("ns/c"))
		w.Settle()
	}, both(
		`log: informer: error "Observed a panic" err=<nil> panic="index function: ns/b" stacktrace="(a stack)"`,
		"state: indexer=[ns/a@2 ns/b@3] storeRV=2 lastSyncRV=4",
		"-- 1s later\nh: OnAdd ns/c@4",
		"h: OnDelete ns/c@5",
	))
}

// client-go: shared_informer.go RunWithContext; controller.go
// RunWithContext (P14): with utilruntime.ReallyCrash true (the default),
// a processing panic (here an index function's) leaves the controller at
// once; the shared informer's deferred steps still run (it is marked
// stopped, its processor stops) and wait for what Run started, which
// includes the wait for sync: a panic before the informer synced keeps
// Run until its context ends. Then the panic comes out of Run.
func TestSharedInformerProcessingPanicLeavesRun(t *testing.T) {
	var handled int
	saved := utilruntime.PanicHandlers
	utilruntime.PanicHandlers = append(append([]func(context.Context, any){}, saved...), func(context.Context, any) { handled++ })
	t.Cleanup(func() { utilruntime.PanicHandlers = saved })
	panicsOn := func(key string) func(any) ([]string, error) {
		return func(obj any) ([]string, error) {
			if keyOf(obj) == key {
				panic("index function: " + key)
			}
			return nil, nil
		}
	}
	for _, beforeSync := range []bool{false, true} {
		t.Run(fmt.Sprintf("beforeSync=%v", beforeSync), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				got := map[string][]string{}
				for _, impl := range []string{"cachelab", "client-go"} {
					srv := dt.NewServer()
					srv.Write("ADDED", dt.Pod("ns/a"))
					if beforeSync {
						srv.Write("ADDED", dt.Pod("ns/x"))
					}
					ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logr.Discard()))
					var run func()
					var stopped func() bool
					var add func() error
					if impl == "cachelab" {
						inf := informer.New(srv, informer.Options{ExampleObject: &unstructured.Unstructured{}, Indexers: store.Indexers{"panics": panicsOn("ns/x")}})
						run, stopped = func() { inf.Run(ctx) }, inf.IsStopped
						add = func() error { _, err := inf.AddEventHandler(calmHandler{}); return err }
					} else {
						inf := cache.NewSharedIndexInformer(srv, &unstructured.Unstructured{}, 0, cache.Indexers{"panics": panicsOn("ns/x")})
						run, stopped = func() { inf.RunWithContext(ctx) }, inf.IsStopped
						add = func() error { _, err := inf.AddEventHandler(calmHandler{}); return err }
					}
					var out []string
					done := make(chan struct{})
					go func() {
						defer close(done)
						defer func() { out = append(out, fmt.Sprint("Run panicked: ", recover())) }()
						run()
					}()
					synctest.Wait()
					if !beforeSync {
						srv.Write("ADDED", dt.Pod("ns/x"))
						synctest.Wait()
					}
					select {
					case <-done:
						out = append(out, "Run has returned")
					default:
						out = append(out, "Run has not returned")
					}
					out = append(out, fmt.Sprintf("stopped=%v add=%v panic handlers=%d", stopped(), errString(add()), handled))
					cancel()
					<-done
					got[impl] = out
					handled = 0
				}
				if d := cmp.Diff(got["client-go"], got["cachelab"]); d != "" {
					t.Errorf("(-client-go +cachelab):\n%s", d)
				}
				t.Log(got["client-go"])
			})
		})
	}
}
