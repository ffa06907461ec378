package informer_test

import (
	"context"
	"testing"
	"testing/synctest"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/informer"
	dt "github.com/cachelab/cachelab/internal/difftest"
	"github.com/cachelab/cachelab/reflector"
	"github.com/cachelab/cachelab/store"
)

// blockingList is a server whose LIST blocks until release is closed and
// ignores its context, as a cache.ListWatch built from a plain ListFunc
// does.
type blockingList struct {
	*dt.Server
	release chan struct{}
}

func (b blockingList) ListWithContext(_ context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	<-b.release
	return b.Server.ListWithContext(context.Background(), opts)
}

func (b blockingList) List(opts metav1.ListOptions) (runtime.Object, error) {
	return b.ListWithContext(context.Background(), opts)
}

// client-go: reflector.go list (its LIST runs on a goroutine of its own),
// controller.go, shared_informer.go RunWithContext (F8): stopping during a
// LIST that ignores its context returns at once; the LIST's result, when
// it comes, is dropped. For the informer's Run in both stacks (the
// default one falls back to LIST on a server without watch-list), and for
// the reflector's ListAndWatch.
func TestStopDuringABlockedList(t *testing.T) {
	for _, st := range bothStacks {
		t.Run(string(st), func(t *testing.T) {
			if st == informer.Classic {
				clientfeaturestesting.SetFeatureDuringTest(t, features.InOrderInformers, false)
				clientfeaturestesting.SetFeatureDuringTest(t, features.WatchListClient, false)
			}
			synctest.Test(t, func(t *testing.T) {
				release := make(chan struct{})
				defer close(release)
				lw := func() blockingList {
					s := dt.NewServer()
					s.NoWatchList = true
					s.Write("ADDED", pod("ns/a"))
					return blockingList{s, release}
				}
				runs := map[string]func(context.Context){
					"cachelab informer Run":  informer.New(lw(), informer.Options{Stack: st, ExampleObject: &unstructured.Unstructured{}}).Run,
					"client-go informer Run": cache.NewSharedIndexInformer(lw(), &unstructured.Unstructured{}, 0, cache.Indexers{}).RunWithContext,
					"cachelab ListAndWatch": func(ctx context.Context) {
						_ = reflector.New(lw(), store.New(store.Options{}), reflector.Options{}).ListAndWatch(ctx)
					},
					"client-go ListAndWatch": func(ctx context.Context) {
						_ = cache.NewReflector(lw(), &unstructured.Unstructured{}, cache.NewStore(cache.MetaNamespaceKeyFunc), 0).ListAndWatchWithContext(ctx)
					},
				}
				returned := map[string]bool{}
				for name, run := range runs {
					ctx, cancel := context.WithCancel(context.Background())
					done := make(chan struct{})
					go func() {
						defer close(done)
						run(ctx)
					}()
					synctest.Wait() // listing, blocked
					cancel()
					synctest.Wait()
					select {
					case <-done:
						returned[name] = true
					default:
						returned[name] = false
					}
				}
				for _, impl := range []string{"informer Run", "ListAndWatch"} {
					if cl, cg := returned["cachelab "+impl], returned["client-go "+impl]; cl != cg || !cg {
						t.Errorf("%s after the stop, blocked in a LIST: cachelab returned=%v, client-go returned=%v", impl, cl, cg)
					}
				}
			})
		})
	}
}
