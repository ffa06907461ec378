package reflector_test

import (
	"context"
	"testing"
	"testing/synctest"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	dt "github.com/cachelab/cachelab/internal/difftest"
	"github.com/cachelab/cachelab/reflector"
	"github.com/cachelab/cachelab/store"
)

// slowReplace holds Replace until release is closed: a store that is
// still taking the initial list when the context ends.
type slowReplace struct {
	reflector.Store
	entered chan struct{}
	release chan struct{}
}

func (s slowReplace) Replace(list []any, rv string) error {
	close(s.entered)
	<-s.release
	return s.Store.Replace(list, rv)
}

// client-go: reflector.go ListAndWatchWithContext and watch (their
// deferred Stop): in watch-list mode, a context that ends while the
// initial list is being stored stops the watch the list came on; the
// server does not keep it open until its timeout. The same for a context
// that ends while the watch loop runs.
func TestContextEndStopsTheWatch(t *testing.T) {
	for _, during := range []string{"replace", "watch"} {
		t.Run(during, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				open := map[string]int{}
				for _, impl := range []string{"cachelab", "client-go"} {
					srv := dt.NewServer()
					srv.Write("ADDED", dt.Pod("ns/a"))
					entered, release := make(chan struct{}), make(chan struct{})
					var run func(context.Context) error
					if impl == "cachelab" {
						var st reflector.Store = store.New(store.Options{})
						if during == "replace" {
							st = slowReplace{st, entered, release}
						}
						r := reflector.New(srv, st, reflector.Options{UseWatchList: true})
						run = r.ListAndWatch
					} else {
						var st cache.Store = cache.NewStore(cache.MetaNamespaceKeyFunc)
						if during == "replace" {
							st = cgSlowReplace{st, entered, release}
						}
						r := cache.NewReflector(srv, &unstructured.Unstructured{}, st, 0)
						run = r.ListAndWatchWithContext
					}
					ctx, cancel := context.WithCancel(context.Background())
					done := make(chan struct{})
					go func() {
						defer close(done)
						_ = run(ctx)
					}()
					synctest.Wait()
					if n := srv.OpenWatches(); n != 1 {
						t.Fatalf("%s: %d watches open before the stop, want 1", impl, n)
					}
					cancel()
					close(release)
					<-done
					synctest.Wait()
					open[impl] = srv.OpenWatches()
				}
				if open["cachelab"] != open["client-go"] || open["client-go"] != 0 {
					t.Errorf("watches left open after the stop during %s: cachelab %d, client-go %d", during, open["cachelab"], open["client-go"])
				}
			})
		})
	}
}

type cgSlowReplace struct {
	cache.Store
	entered chan struct{}
	release chan struct{}
}

func (s cgSlowReplace) Replace(list []any, rv string) error {
	close(s.entered)
	<-s.release
	return s.Store.Replace(list, rv)
}
