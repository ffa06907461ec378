package informer_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/informer"
	dt "github.com/cachelab/cachelab/internal/difftest"
	"github.com/cachelab/cachelab/internal/testdeadline"
	"github.com/cachelab/cachelab/listwatch"
	"github.com/cachelab/cachelab/store"
)

// Live, over a real embedded etcd: cachelab's and client-go's informers,
// each on its own ListerWatcher connection, follow the same writes, a
// watch closed under them, and a compaction that overtakes their watch
// (410, relist, a missed delete turned into a tombstone). Each handler's
// calls, the indexers, the listers and WaitForCacheSync are compared; the
// caches must equal etcd. (P1-P3, P9, P13 listers, F4, F5, E7, both stacks)
func TestLiveOverEtcd(t *testing.T) {
	for _, st := range bothStacks {
		t.Run(string(st), func(t *testing.T) {
			if st == informer.Classic {
				clientfeaturestesting.SetFeatureDuringTest(t, features.InOrderInformers, false)
				clientfeaturestesting.SetFeatureDuringTest(t, features.WatchListClient, false)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			e, err := listwatch.StartEmbedded(ctx, listwatch.EmbeddedOptions{Dir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			wr := listwatch.NewWriter(e.Client(), listwatch.Pods, listwatch.WriterOptions{})
			write := func(f func() (*unstructured.Unstructured, error)) *unstructured.Unstructured {
				t.Helper()
				o, err := f()
				if err != nil {
					t.Fatal(err)
				}
				return o
			}
			for i := range 4 {
				write(func() (*unstructured.Unstructured, error) {
					return wr.Create(ctx, pod(fmt.Sprintf("ns%d/p%d", i%2, i), dt.Label("app", fmt.Sprint(i%2))))
				})
			}
			clLW := listwatch.NewListerWatcher(e.Client(), listwatch.Pods, listwatch.Options{})
			cgLW := listwatch.NewListerWatcher(e.Client(), listwatch.Pods, listwatch.Options{})
			cl := informer.New(clLW, informer.Options{Stack: st, ExampleObject: &unstructured.Unstructured{},
				Indexers: store.Indexers{store.NamespaceIndex: store.MetaNamespaceIndexFunc}})
			cg := cache.NewSharedIndexInformer(cgLW, &unstructured.Unstructured{}, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
			clRec, cgRec := newLiveRecorder(), newLiveRecorder()
			clReg, _ := cl.AddEventHandler(clRec)
			cgReg, _ := cg.AddEventHandler(cgRec)
			var wg sync.WaitGroup
			wg.Go(func() { cl.Run(ctx) })
			wg.Go(func() { cg.RunWithContext(ctx) })
			defer wg.Wait()
			defer cancel()
			if !informer.WaitForCacheSync(ctx, nil, cl.HasSynced, clReg.HasSynced) || !cache.WaitForCacheSync(ctx.Done(), cg.HasSynced, cgReg.HasSynced) {
				t.Fatal("not synced")
			}
			// step waits until each side's handler has had calls calls
			// since the last step, then compares.
			step := func(name string, calls int) []string {
				t.Helper()
				clRec.awaitCalls(t, calls)
				cgRec.awaitCalls(t, calls)
				return compareLive(t, name, clRec, cgRec, cl.GetIndexer(), cg.GetIndexer(), e)
			}
			step("initial list", 4)

			live := write(func() (*unstructured.Unstructured, error) { return wr.Create(ctx, pod("ns0/live")) })
			live.SetLabels(map[string]string{"v": "2"})
			live = write(func() (*unstructured.Unstructured, error) { return wr.Update(ctx, live) })
			write(func() (*unstructured.Unstructured, error) {
				return wr.Delete(ctx, "ns0", "p0", listwatch.Preconditions{})
			})
			step("live writes", 3)

			clLW.DropWatches()
			cgLW.DropWatches()
			write(func() (*unstructured.Unstructured, error) { return wr.Create(ctx, pod("ns1/after-drop")) })
			step("watch closed under the informers", 1)

			clLW.HoldWatches()
			cgLW.HoldWatches()
			clLW.DropWatches()
			cgLW.DropWatches()
			live.SetLabels(map[string]string{"v": "3"})
			live.SetResourceVersion("")
			live = write(func() (*unstructured.Unstructured, error) { return wr.Update(ctx, live) })
			write(func() (*unstructured.Unstructured, error) {
				return wr.Delete(ctx, "ns1", "p1", listwatch.Preconditions{})
			})
			rev, err := e.Revision(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := e.Compact(ctx, rev); err != nil {
				t.Fatal(err)
			}
			clLW.ReleaseWatches()
			cgLW.ReleaseWatches()
			calls := step("410 after compaction, relist", 5) // 4 listed, 1 tombstone
			if !strings.Contains(strings.Join(calls, "\n"), "OnDelete Tombstone(ns1/p1: ns1/p1@3)") {
				t.Errorf("the relist did not turn the missed delete into a tombstone: %v", calls)
			}

			clL, cgL := informer.NewLister(cl.GetIndexer(), podsGR()), cache.NewGenericLister(cg.GetIndexer(), podsGR())
			sel := labels.SelectorFromSet(labels.Set{"app": "1"})
			for _, ns := range []string{"", "ns0", "ns1", "none"} {
				a, errA := clL.ByNamespace(ns).List(sel)
				b, errB := cgL.ByNamespace(ns).List(sel)
				if d := dt.Diff([]any{dt.DescribeSorted(objs(a)), errString(errA)}, []any{dt.DescribeSorted(objs(b)), errString(errB)}); d != "" {
					t.Errorf("lister ByNamespace(%q).List differs:\n%s", ns, d)
				}
			}
			for _, key := range []string{"ns0/live", "ns1/p1", "nope"} {
				ns, name, _ := strings.Cut(key, "/")
				a, errA := clL.ByNamespace(ns).Get(name)
				b, errB := cgL.ByNamespace(ns).Get(name)
				if d := dt.Diff([]any{describeObj(a), errString(errA)}, []any{describeObj(b), errString(errB)}); d != "" {
					t.Errorf("lister Get(%q) differs:\n%s", key, d)
				}
				a, errA = clL.Get(key)
				b, errB = cgL.Get(key)
				if d := dt.Diff([]any{describeObj(a), errString(errA)}, []any{describeObj(b), errString(errB)}); d != "" {
					t.Errorf("lister Get by key %q differs:\n%s", key, d)
				}
			}
		})
	}
}

func podsGR() schema.GroupResource { return schema.GroupResource{Resource: "pods"} }

func objs[T any](xs []T) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

func describeObj(o any) string {
	if o == nil {
		return "<nil>"
	}
	if u, ok := o.(*unstructured.Unstructured); ok && u == nil {
		return "<nil>"
	}
	return dt.Describe(o)
}

// compareLive compares the calls since the last step (per key: a relist
// delivers in map order), the indexers, and both with etcd.
func compareLive(t *testing.T, step string, clRec, cgRec *liveRecorder, cli store.Indexer, cgi cache.Indexer, e *listwatch.Embedded) []string {
	t.Helper()
	a, b := clRec.take(), cgRec.take()
	if d := dt.Diff(dt.ByKey(a), dt.ByKey(b)); d != "" {
		t.Errorf("%s: handler calls differ (-client-go +cachelab):\n%s", step, d)
	}
	clState, cgState := dt.DescribeSorted(cli.List()), dt.DescribeSorted(cgi.List())
	if d := dt.Diff(clState, cgState); d != "" {
		t.Errorf("%s: indexers differ:\n%s", step, d)
	}
	l, err := listwatch.NewListerWatcher(e.Client(), listwatch.Pods, listwatch.Options{}).ListWithContext(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	items := l.(*unstructured.UnstructuredList).Items
	etcd := make([]any, len(items))
	for i := range items {
		etcd[i] = &items[i]
	}
	if d := dt.Diff(dt.DescribeSorted(etcd), clState); d != "" {
		t.Errorf("%s: cachelab's cache differs from etcd:\n%s", step, d)
	}
	return a
}

// liveRecorder records handler calls and lets a test wait for one.
type liveRecorder struct {
	mu   sync.Mutex
	got  []string
	seen int
	ch   chan string
}

func newLiveRecorder() *liveRecorder { return &liveRecorder{ch: make(chan string, 10000)} }

func (r *liveRecorder) note(s string) {
	r.mu.Lock()
	r.got = append(r.got, s)
	r.mu.Unlock()
	r.ch <- s
}

func (r *liveRecorder) OnAdd(obj any, initial bool) {
	s := "OnAdd " + dt.Describe(obj)
	if initial {
		s += " initial"
	}
	r.note(s)
}
func (r *liveRecorder) OnUpdate(old, obj any) {
	r.note("OnUpdate " + dt.Describe(old) + " -> " + dt.Describe(obj))
}
func (r *liveRecorder) OnDelete(obj any) { r.note("OnDelete " + dt.Describe(obj)) }

// awaitCalls waits for n calls since the last take. Only the test
// binary's deadline (package testdeadline) bounds the wait: it guards
// against a hang.
func (r *liveRecorder) awaitCalls(t *testing.T, n int) {
	t.Helper()
	deadline := testdeadline.Context(t)
	for range n {
		select {
		case <-r.ch:
		case <-deadline.Done():
			r.mu.Lock()
			defer r.mu.Unlock()
			t.Fatalf("not %d calls by the test binary's deadline; got %v", n, r.got)
		}
	}
}

func (r *liveRecorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := append([]string(nil), r.got[r.seen:]...)
	r.seen = len(r.got)
	return out
}
