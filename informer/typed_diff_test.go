package informer_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/informer"
	dt "github.com/cachelab/cachelab/internal/difftest"
	"github.com/cachelab/cachelab/store"
)

type uPod = *unstructured.Unstructured

// typedLog records typed calls as lines, the same way for both sides.
type typedLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *typedLog) add(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

func describeDeleted(obj uPod, final bool, finalKey, name, ns, key string) string {
	o := "<none>"
	if obj != nil {
		o = dt.Describe(obj)
	}
	return fmt.Sprintf("OnDelete obj=%s finalStateUnknown=%v(%s) name=%s namespace=%s key=%s", o, final, finalKey, name, ns, key)
}

// client-go: shared_informer.go NewTypedSharedIndexInformer,
// typedResourceEventHandler; controller.go DeletedObject,
// TypedResourceEventHandlerFuncs, TypedFilteringResourceEventHandler;
// index.go TypedIndexer (P17): typed handlers get the same calls, a
// tombstone arrives as a DeletedObject with FinalStateUnknown and the
// last known object, a filter that stops matching gives a DeletedObject
// without one, and the typed indexer answers with Ts.
func TestTypedInformer(t *testing.T) {
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
						srv.Write("ADDED", dt.Pod(k, dt.Label("app", "web")))
					}
					all, web := &typedLog{}, &typedLog{}
					isWeb := func(p uPod) bool { return p != nil && p.GetLabels()["app"] == "web" }
					byApp := func(p uPod) ([]string, error) { return []string{p.GetLabels()["app"]}, nil }
					ctx, cancel := context.WithCancel(context.Background())
					var run func()
					var byIndex func() []string
					if impl == "cachelab" {
						inf := informer.NewTypedSharedIndexInformer[uPod](informer.New(srv, informer.Options{Stack: st, ExampleObject: &unstructured.Unstructured{}}))
						record := func(l *typedLog) informer.TypedResourceEventHandlerDetailedFuncs[uPod] {
							return informer.TypedResourceEventHandlerDetailedFuncs[uPod]{
								AddFunc:    func(p uPod, initial bool) { l.add("OnAdd %s initial=%v", dt.Describe(p), initial) },
								UpdateFunc: func(o, n uPod) { l.add("OnUpdate %s -> %s", dt.Describe(o), dt.Describe(n)) },
								DeleteFunc: func(d informer.DeletedObject[uPod]) {
									key := ""
									if d.FinalStateUnknown != nil {
										key = d.FinalStateUnknown.Key
									}
									l.add("%s", describeDeleted(d.OptionalObj, d.FinalStateUnknown != nil, key, d.GetName(), d.GetNamespace(), d.GetKey()))
								},
							}
						}
						_, _ = inf.AddTypedEventHandler(record(all))
						_, _ = inf.AddTypedEventHandler(informer.TypedFilteringResourceEventHandler[uPod]{FilterFunc: isWeb, Handler: record(web)}, informer.HandlerOptions{})
						if _, err := inf.AddTypedEventHandler(record(all), informer.HandlerOptions{}, informer.HandlerOptions{}); err != nil {
							all.add("error: %v", err)
						}
						_ = inf.AddTypedIndexers(store.TypedIndexers[uPod]{"app": byApp})
						byIndex = func() []string {
							ps, err := inf.GetTypedIndexer().ByTypedIndex("app", "web")
							return append(sortedPods(ps), fmt.Sprint(err))
						}
						run = func() { inf.Run(ctx) }
					} else {
						inf := cache.NewTypedSharedIndexInformer[uPod](cache.NewSharedIndexInformer(srv, &unstructured.Unstructured{}, 0, cache.Indexers{}))
						record := func(l *typedLog) cache.TypedResourceEventHandlerDetailedFuncs[uPod] {
							return cache.TypedResourceEventHandlerDetailedFuncs[uPod]{
								AddFunc:    func(p uPod, initial bool) { l.add("OnAdd %s initial=%v", dt.Describe(p), initial) },
								UpdateFunc: func(o, n uPod) { l.add("OnUpdate %s -> %s", dt.Describe(o), dt.Describe(n)) },
								DeleteFunc: func(d cache.DeletedObject[uPod]) {
									key := ""
									if d.FinalStateUnknown != nil {
										key = d.FinalStateUnknown.Key
									}
									l.add("%s", describeDeleted(d.OptionalObj, d.FinalStateUnknown != nil, key, d.GetName(), d.GetNamespace(), d.GetKey()))
								},
							}
						}
						_, _ = inf.AddTypedEventHandler(record(all))
						_, _ = inf.AddTypedEventHandler(cache.TypedFilteringResourceEventHandler[uPod]{FilterFunc: isWeb, Handler: record(web)}, cache.HandlerOptions{})
						if _, err := inf.AddTypedEventHandler(record(all), cache.HandlerOptions{}, cache.HandlerOptions{}); err != nil {
							all.add("error: %v", err)
						}
						_ = inf.AddTypedIndexers(cache.TypedIndexers[uPod]{"app": byApp})
						byIndex = func() []string {
							ps, err := inf.GetTypedIndexer().ByTypedIndex("app", "web")
							return append(sortedPods(ps), fmt.Sprint(err))
						}
						run = func() { inf.RunWithContext(ctx) }
					}
					done := make(chan struct{})
					go func() { defer close(done); run() }()
					synctest.Wait()
					srv.Write("MODIFIED", dt.Pod("ns/a", dt.Label("app", "db"))) // stops matching the filter
					srv.Write("DELETED", dt.Pod("ns/b", dt.Label("app", "web")))
					synctest.Wait()
					srv.BreakWatches(gone)
					synctest.Wait()
					srv.Write("DELETED", dt.Pod("ns/c", dt.Label("app", "web"))) // missed: a tombstone after the relist
					srv.Compact()
					time.Sleep(2 * time.Second)
					synctest.Wait()
					srv.Write("ADDED", dt.Pod("ns/d", dt.Label("app", "web")))
					synctest.Wait()
					for _, l := range []*typedLog{all, web} {
						l.mu.Lock()
						got[impl] = append(got[impl], dt.ByKey(l.lines)...)
						got[impl] = append(got[impl], "--")
						l.mu.Unlock()
					}
					got[impl] = append(got[impl], byIndex()...)
					cancel()
					<-done
				}
				if d := cmp.Diff(got["client-go"], got["cachelab"]); d != "" {
					t.Errorf("typed calls (-client-go +cachelab):\n%s", d)
				}
				for _, l := range got["client-go"] {
					t.Log(l)
				}
			})
		})
	}
}

func sortedPods(ps []uPod) []string {
	out := []string{}
	for _, p := range ps {
		out = append(out, dt.Describe(p))
	}
	return dt.Sorted(out)
}

// client-go: controller.go DeletedObject (P17): its names and key in every
// case: with an object, with a tombstone (whose key wins, extra "/" kept
// in the name), with neither.
func TestDeletedObjectNames(t *testing.T) {
	a := dt.Pod("ns/a")
	cluster := dt.Pod("c")
	for _, c := range []struct {
		name string
		obj  uPod
		key  *string
	}{
		{"object", a, nil},
		{"cluster-scoped object", cluster, nil},
		{"tombstone", a, ptr("ns/a")},
		{"tombstone without object", nil, ptr("ns/gone")},
		{"tombstone key with two slashes", nil, ptr("ns/a/b")},
		{"tombstone key without namespace", nil, ptr("c")},
		{"nothing", nil, nil},
	} {
		cl := informer.DeletedObject[uPod]{OptionalObj: c.obj}
		cg := cache.DeletedObject[uPod]{OptionalObj: c.obj}
		if c.key != nil {
			cl.FinalStateUnknown = &store.DeletedFinalStateUnknown{Key: *c.key, Obj: c.obj}
			cg.FinalStateUnknown = &cache.DeletedFinalStateUnknown{Key: *c.key, Obj: c.obj}
		}
		a := []string{cl.GetName(), cl.GetNamespace(), cl.GetKey(), cl.GetObjectName().String()}
		b := []string{cg.GetName(), cg.GetNamespace(), cg.GetKey(), cg.GetObjectName().String()}
		if d := cmp.Diff(b, a); d != "" {
			t.Errorf("%s: name, namespace, key, object name (-client-go +cachelab):\n%s", c.name, d)
		}
	}
}

func ptr(s string) *string { return &s }
