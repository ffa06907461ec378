package informer_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/informer"
	dt "github.com/cachelab/cachelab/internal/difftest"
)

// gatedHandler records its calls; each waits until release is closed.
type gatedHandler struct {
	mu      sync.Mutex
	calls   []string
	release chan struct{}
}

func (h *gatedHandler) record(s string) {
	h.mu.Lock()
	h.calls = append(h.calls, s)
	h.mu.Unlock()
	<-h.release
}
func (h *gatedHandler) OnAdd(obj any, _ bool) { h.record("OnAdd " + dt.Describe(obj)) }
func (h *gatedHandler) OnUpdate(_, obj any)   { h.record("OnUpdate " + dt.Describe(obj)) }
func (h *gatedHandler) OnDelete(obj any)      { h.record("OnDelete " + dt.Describe(obj)) }
func (h *gatedHandler) seen() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string{}, h.calls...)
}

// client-go: shared_informer.go ShutDownEventHandler (v0.36), removeListener,
// processorListener.run (P10, P15): ShutDownEventHandler removes the
// handler and returns only once the call in progress has returned; what
// was buffered is dropped; a second call returns at once.
func TestShutDownEventHandler(t *testing.T) {
	for _, st := range bothStacks {
		t.Run(string(st), func(t *testing.T) {
			if st == informer.Classic {
				clientfeaturestesting.SetFeatureDuringTest(t, features.InOrderInformers, false)
				clientfeaturestesting.SetFeatureDuringTest(t, features.WatchListClient, false)
			}
			synctest.Test(t, func(t *testing.T) {
				type outcome struct {
					ReturnedWhileHeld, ReturnedAfter, AgainReturned bool
					Calls                                           []string
				}
				got := map[string]outcome{}
				for _, impl := range []string{"cachelab", "client-go"} {
					srv := dt.NewServer()
					srv.Write("ADDED", pod("ns/a"))
					h := &gatedHandler{release: make(chan struct{})}
					ctx, cancel := context.WithCancel(context.Background())
					var shutDown func() error
					var run func()
					if impl == "cachelab" {
						inf := informer.New(srv, informer.Options{Stack: st, ExampleObject: &unstructured.Unstructured{}})
						reg, _ := inf.AddEventHandler(h)
						shutDown = func() error { return informer.ShutDownEventHandler(inf, reg) }
						run = func() { inf.Run(ctx) }
					} else {
						inf := cache.NewSharedIndexInformer(srv, &unstructured.Unstructured{}, 0, cache.Indexers{})
						reg, _ := inf.AddEventHandler(h)
						shutDown = func() error { return cache.ShutDownEventHandler(inf, reg) }
						run = func() { inf.RunWithContext(ctx) }
					}
					var wg sync.WaitGroup
					wg.Go(run)
					synctest.Wait() // the handler holds in OnAdd ns/a
					srv.Write("ADDED", pod("ns/b"))
					synctest.Wait() // ns/b is buffered
					var o outcome
					returned := make(chan error, 1)
					go func() { returned <- shutDown() }()
					synctest.Wait()
					select {
					case <-returned:
						o.ReturnedWhileHeld = true
					default:
					}
					close(h.release)
					synctest.Wait()
					select {
					case err := <-returned:
						o.ReturnedAfter = err == nil
					default:
					}
					again := make(chan error, 1)
					go func() { again <- shutDown() }()
					synctest.Wait()
					select {
					case err := <-again:
						o.AgainReturned = err == nil
					default:
					}
					srv.Write("ADDED", pod("ns/c"))
					synctest.Wait()
					o.Calls = h.seen()
					got[impl] = o
					cancel()
					wg.Wait()
				}
				if d := cmp.Diff(got["client-go"], got["cachelab"]); d != "" {
					t.Errorf("ShutDownEventHandler (-client-go +cachelab):\n%s", d)
				}
				t.Logf("%+v", got["client-go"])
			})
		})
	}
}
