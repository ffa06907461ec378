package reflector_test

import (
	"context"
	"testing"
	"testing/synctest"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	dt "github.com/cachelab/cachelab/internal/difftest"
	"github.com/cachelab/cachelab/reflector"
	"github.com/cachelab/cachelab/store"
)

// plainLW is a ListerWatcher without context methods that declares it
// cannot stream initial events, as hand-written ListerWatchers in tests
// do (client-go's ListWatch, given to ToListWatcherWithWatchListSemantics).
type plainLW struct{ s *dt.Server }

func (p plainLW) List(o metav1.ListOptions) (runtime.Object, error)   { return p.s.List(o) }
func (p plainLW) Watch(o metav1.ListOptions) (watch.Interface, error) { return p.s.Watch(o) }
func (p plainLW) IsWatchListSemanticsUnSupported() bool               { return true }

// client-go: reflector.go NewReflectorWithOptions (F1): the watch-list
// opt-out of a ListerWatcher without context methods is honoured: it is
// looked for before the ListerWatcher is wrapped to take a context. Both
// reflectors start with a LIST. (cachelab looked only at its own wrapper
// and asked for a watch-list.)
func TestWatchListOptOutWithoutContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		first := map[string]string{}
		for _, impl := range []string{"cachelab", "client-go"} {
			srv := dt.NewServer()
			srv.Write("ADDED", dt.Pod("ns/a"))
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				if impl == "cachelab" {
					reflector.New(plainLW{srv}, store.New(store.Options{}), reflector.Options{UseWatchList: true}).Run(ctx)
				} else {
					cache.NewReflector(plainLW{srv}, &unstructured.Unstructured{}, cache.NewStore(cache.MetaNamespaceKeyFunc), 0).RunWithContext(ctx)
				}
			}()
			synctest.Wait()
			cancel()
			<-done
			if rs := srv.Requests(); len(rs) > 0 {
				first[impl] = rs[0].Verb + " " + dt.DescribeOptions(rs[0].Opts)
			}
		}
		if first["cachelab"] != first["client-go"] {
			t.Errorf("first request: cachelab %q, client-go %q", first["cachelab"], first["client-go"])
		}
		t.Log(first["client-go"])
	})
}
