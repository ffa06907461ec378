package reflector_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	dt "github.com/cachelab/cachelab/internal/difftest"
	"github.com/cachelab/cachelab/reflector"
	"github.com/cachelab/cachelab/store"
)

// stopAtFirstPage serves LIST pages from a server (RV "0" is asked as ""
// so that the server pages it) and ends the reflector's context as the
// first page is served, as a stop in the middle of a paged LIST does.
type stopAtFirstPage struct {
	*dt.Server
	stop func()

	mu    sync.Mutex
	pages []string
}

func (s *stopAtFirstPage) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	s.mu.Lock()
	s.pages = append(s.pages, "continue="+opts.Continue)
	s.mu.Unlock()
	if opts.ResourceVersion == "0" {
		opts.ResourceVersion = ""
	}
	if opts.Continue == "" {
		s.stop()
	}
	return s.Server.ListWithContext(ctx, opts)
}

func (s *stopAtFirstPage) List(opts metav1.ListOptions) (runtime.Object, error) {
	return s.ListWithContext(context.Background(), opts)
}

// client-go: reflector.go list, tools/pager (F8): the pager runs with
// context.Background(), so a context that ends between the pages of a
// LIST does not stop the pages: each is still asked for (with the ended
// context, which a real client fails at once), on the LIST's own
// goroutine, and the result is dropped. (cachelab stopped asking.)
func TestPagesGoOnAfterTheStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pages := map[string][]string{}
		for _, impl := range []string{"cachelab", "client-go"} {
			ctx, cancel := context.WithCancel(context.Background())
			lw := &stopAtFirstPage{Server: dt.NewServer(), stop: cancel}
			lw.NoWatchList = true
			for _, k := range []string{"ns/a", "ns/b", "ns/c"} {
				lw.Write("ADDED", dt.Pod(k))
			}
			done := make(chan struct{})
			go func() {
				defer close(done)
				if impl == "cachelab" {
					reflector.New(lw, store.New(store.Options{}), reflector.Options{WatchListPageSize: 1}).Run(ctx)
				} else {
					r := cache.NewReflector(lw, &unstructured.Unstructured{}, cache.NewStore(cache.MetaNamespaceKeyFunc), 0)
					r.WatchListPageSize = 1
					r.RunWithContext(ctx)
				}
			}()
			<-done
			synctest.Wait() // the LIST's own goroutine, still paging
			lw.mu.Lock()
			pages[impl] = lw.pages
			lw.mu.Unlock()
		}
		if d := dt.Diff(pages["cachelab"], pages["client-go"]); d != "" || len(pages["client-go"]) < 2 {
			t.Errorf("pages asked for (-client-go +cachelab):\n%s\nclient-go: %q", d, pages["client-go"])
		}
		t.Log(pages["client-go"])
	})
}
