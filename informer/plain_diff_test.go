package informer_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/cachelab/cachelab/informer"
	dt "github.com/cachelab/cachelab/internal/difftest"
	"github.com/cachelab/cachelab/store"
)

// lineHandler records calls as lines, and panics after recording a call
// about panicOn.
type lineHandler struct {
	mu      sync.Mutex
	lines   []string
	panicOn string
}

func (h *lineHandler) add(key, format string, args ...any) {
	h.mu.Lock()
	h.lines = append(h.lines, fmt.Sprintf(format, args...))
	h.mu.Unlock()
	if key == h.panicOn {
		panic("handler: " + key)
	}
}

func keyOf(obj any) string {
	k, _ := store.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if k == "" {
		k, _ = cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	}
	return k
}

func (h *lineHandler) OnAdd(obj any, initial bool) {
	h.add(keyOf(obj), "OnAdd %s initial=%v", dt.Describe(obj), initial)
}
func (h *lineHandler) OnUpdate(o, n any) {
	h.add(keyOf(n), "OnUpdate %s -> %s", dt.Describe(o), dt.Describe(n))
}
func (h *lineHandler) OnDelete(obj any) { h.add(keyOf(obj), "OnDelete %s", dt.Describe(obj)) }

func (h *lineHandler) take() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := h.lines
	h.lines = nil
	return out
}

// client-go: controller.go New, NewInformerWithOptions, processDeltas,
// processDeltasInBatch (P1-P4, P12, P14, P18): a plain informer keeps its
// store and calls its one handler the way client-go's does, in both
// stacks: the initial list, watch events, a delete missed during a relist
// (a tombstone), a resync; its handler runs on the processing goroutine,
// so a handler that panics loses the rest of the item and holds
// processing for a second.
func TestPlainInformer(t *testing.T) {
	dt.CatchPanics(t)
	for _, st := range bothStacks {
		t.Run(string(st), func(t *testing.T) {
			if st == informer.Classic {
				clientfeaturestesting.SetFeatureDuringTest(t, features.InOrderInformers, false)
				clientfeaturestesting.SetFeatureDuringTest(t, features.WatchListClient, false)
			}
			synctest.Test(t, func(t *testing.T) {
				got := map[string][]string{}
				for _, impl := range []string{"cachelab", "client-go"} {
					srv := dt.NewServer()
					for _, k := range []string{"ns/a", "ns/b", "ns/c"} {
						srv.Write("ADDED", dt.Pod(k))
					}
					h := &lineHandler{panicOn: "ns/x"}
					// The handler's panic is logged through Run's context:
					// not in this test's output.
					ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logr.Discard()))
					var run func()
					var state func() []string
					var synced func() bool
					if impl == "cachelab" {
						s, c := informer.NewInformerWithOptions(informer.InformerOptions{ListerWatcher: srv, ObjectType: &unstructured.Unstructured{},
							Handler: h, ResyncPeriod: 30 * time.Second, Stack: st})
						run, synced = func() { c.Run(ctx) }, c.HasSynced
						state = func() []string { return append(dt.Sorted(describeAll(s.List())), "rv="+c.LastSyncResourceVersion()) }
					} else {
						s, c := cache.NewInformerWithOptions(cache.InformerOptions{ListerWatcher: srv, ObjectType: &unstructured.Unstructured{},
							Handler: h, ResyncPeriod: 30 * time.Second})
						run, synced = func() { c.RunWithContext(ctx) }, c.HasSynced
						state = func() []string { return append(dt.Sorted(describeAll(s.List())), "rv="+c.LastSyncResourceVersion()) }
					}
					step := func(what string) {
						synctest.Wait()
						got[impl] = append(got[impl], "-- "+what)
						got[impl] = append(got[impl], dt.ByKey(h.take())...)
						got[impl] = append(got[impl], state()...)
						got[impl] = append(got[impl], fmt.Sprintf("synced=%v", synced()))
					}
					done := make(chan struct{})
					go func() { defer close(done); run() }()
					step("start")
					srv.Write("MODIFIED", dt.Pod("ns/a", dt.Label("v", "2")))
					srv.Write("DELETED", dt.Pod("ns/b"))
					step("update and delete")
					srv.BreakWatches(gone)
					synctest.Wait()
					srv.Write("DELETED", dt.Pod("ns/c"))
					srv.Compact()
					time.Sleep(2 * time.Second)
					step("relist after a missed delete")
					time.Sleep(30 * time.Second)
					step("resync")
					srv.Write("ADDED", dt.Pod("ns/x"))
					step("the handler panics")
					srv.Write("ADDED", dt.Pod("ns/y"))
					step("processing holds")
					time.Sleep(time.Second)
					step("a second later")
					cancel()
					<-done
				}
				if d := cmp.Diff(got["client-go"], got["cachelab"]); d != "" {
					t.Errorf("plain informer (-client-go +cachelab):\n%s", d)
				}
				for _, l := range got["client-go"] {
					t.Log(l)
				}
			})
		})
	}
}

func describeAll(objs []any) []string {
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = dt.Describe(o)
	}
	return out
}

// client-go: controller.go RunWithContext, processLoop; runtime.go
// HandleCrash (P18, P14): with utilruntime.ReallyCrash true (the
// default), a plain informer's panicking handler panics on the processing
// loop, which Run itself runs: the panic comes out of Run, where its caller
// can recover it. (A shared informer's handlers run on goroutines of their
// own: the same panic would end the process.)
func TestPlainInformerPanicReachesRunsCaller(t *testing.T) {
	// Count how often the panic handlers run: once per HandleCrash the
	// panic passes through on its way out.
	var handled int
	saved := utilruntime.PanicHandlers
	utilruntime.PanicHandlers = append(append([]func(context.Context, any){}, saved...), func(context.Context, any) { handled++ })
	t.Cleanup(func() { utilruntime.PanicHandlers = saved })
	synctest.Test(t, func(t *testing.T) {
		got := map[string]string{}
		for _, impl := range []string{"cachelab", "client-go"} {
			srv := dt.NewServer()
			srv.Write("ADDED", dt.Pod("ns/x"))
			h := &lineHandler{panicOn: "ns/x"}
			ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logr.Discard()))
			var run func()
			if impl == "cachelab" {
				_, c := informer.NewInformerWithOptions(informer.InformerOptions{ListerWatcher: srv, ObjectType: &unstructured.Unstructured{}, Handler: h})
				run = func() { c.Run(ctx) }
			} else {
				_, c := cache.NewInformerWithOptions(cache.InformerOptions{ListerWatcher: srv, ObjectType: &unstructured.Unstructured{}, Handler: h})
				run = func() { c.RunWithContext(ctx) }
			}
			func() {
				defer func() { got[impl] = fmt.Sprint("Run panicked: ", recover()) }()
				run()
			}()
			cancel() // the reflector is still running: Run's end was skipped
			synctest.Wait()
			got[impl] += fmt.Sprintf("; handler heard %v; panic handlers ran %d times", h.take(), handled)
			handled = 0
		}
		if got["cachelab"] != got["client-go"] {
			t.Errorf("cachelab: %s\nclient-go: %s", got["cachelab"], got["client-go"])
		}
		t.Log(got["client-go"])
	})
}
