package reflector_test

import (
	"context"
	"testing"
	"testing/synctest"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	dt "github.com/cachelab/cachelab/internal/difftest"
	"github.com/cachelab/cachelab/reflector"
)

// client-go: reflector.go watchList (TransformingStore), the_real_fifo.go
// (D8): a client-go queue with a transformer, given to cachelab's
// reflector as its store, has each object of a watch-list transformed
// twice, once into the temporary store and once into the queue, as under
// client-go's reflector. (cachelab's reflector knew only its own
// TransformingStore, whose method returns cachelab's TransformFunc, and
// transformed once.)
func TestClientGoQueueAsStore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		transforms := map[string][]string{}
		for _, impl := range []string{"cachelab", "client-go"} {
			srv := dt.NewServer()
			srv.Write("ADDED", dt.Pod("ns/a"))
			srv.Write("ADDED", dt.Pod("ns/b"))
			q := cache.NewRealFIFOWithOptions(cache.RealFIFOOptions{KeyFunction: cache.MetaNamespaceKeyFunc,
				Transformer: dt.Transform, AtomicEvents: true})
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				if impl == "cachelab" {
					reflector.New(srv, q, reflector.Options{UseWatchList: true}).Run(ctx)
				} else {
					cache.NewReflector(srv, &unstructured.Unstructured{}, q, 0).RunWithContext(ctx)
				}
			}()
			synctest.Wait()
			cancel()
			<-done
			q.Close()
			for {
				_, err := q.Pop(func(obj any, _ bool) error {
					for _, d := range obj.(cache.Deltas) {
						if info, ok := d.Object.(cache.ReplacedAllInfo); ok {
							for _, o := range info.Objects {
								u := o.(*unstructured.Unstructured)
								transforms[impl] = append(transforms[impl], u.GetName()+" transformed "+u.GetAnnotations()[dt.AnnotationTransformed]+"x")
							}
						}
					}
					return nil
				})
				if err != nil {
					break
				}
			}
		}
		if d := dt.Diff(dt.Sorted(transforms["cachelab"]), dt.Sorted(transforms["client-go"])); d != "" || len(transforms["client-go"]) == 0 {
			t.Errorf("objects of the watch-list (-client-go +cachelab):\n%s", d)
		}
		t.Log(transforms["client-go"])
	})
}
