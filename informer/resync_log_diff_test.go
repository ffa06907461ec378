package informer_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/cachelab/cachelab/informer"
	dt "github.com/cachelab/cachelab/internal/difftest"
)

// client-go: shared_informer.go AddEventHandlerWithOptions,
// determineResyncPeriod, sharedProcessor.resyncCheckPeriodChanged (P7):
// every change to a handler's resync period is logged through that
// handler's logger, in client-go's words: a period under 1 s raised to
// 1 s, a period on an informer that never resyncs dropped, a period under
// the check period raised once the informer runs. The same handlers are
// added to both implementations and what each logged is compared.
func TestResyncPeriodChangesAreLogged(t *testing.T) {
	type add struct {
		name   string
		period *time.Duration
	}
	cases := []struct {
		name          string
		informer      time.Duration // its ResyncPeriod
		before, after []add         // handlers added before and after Run
	}{
		{"an informer that never resyncs", 0, []add{{"h1", dur(5 * time.Second)}}, []add{{"h2", dur(time.Minute)}}},
		{"too small, then lowering the check period", 30 * time.Second,
			[]add{{"h1", nil}, {"h2", dur(500 * time.Millisecond)}, {"h3", dur(10 * time.Second)}},
			[]add{{"h4", dur(200 * time.Millisecond)}}},
		{"smaller than the check period after start", 10 * time.Second,
			[]add{{"h1", nil}}, []add{{"h2", dur(3 * time.Second)}, {"h3", dur(time.Hour)}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				got := map[string][]string{}
				for _, impl := range []string{"cachelab", "client-go"} {
					log := &dt.Log{}
					var addOne func(a add)
					var run func(ctx context.Context)
					if impl == "cachelab" {
						inf := informer.New(dt.NewServer(), informer.Options{ExampleObject: &unstructured.Unstructured{}, ResyncPeriod: c.informer})
						addOne = func(a add) {
							logger := klog.Logger(dt.InfoLogger(log)).WithValues("handler", a.name)
							if _, err := inf.AddEventHandlerWithOptions(calmHandler{}, informer.HandlerOptions{Logger: &logger, ResyncPeriod: a.period}); err != nil {
								t.Fatal(err)
							}
						}
						run = func(ctx context.Context) { inf.Run(ctx) }
					} else {
						inf := cache.NewSharedIndexInformer(dt.NewServer(), &unstructured.Unstructured{}, c.informer, cache.Indexers{})
						addOne = func(a add) {
							logger := klog.Logger(dt.InfoLogger(log)).WithValues("handler", a.name)
							if _, err := inf.AddEventHandlerWithOptions(calmHandler{}, cache.HandlerOptions{Logger: &logger, ResyncPeriod: a.period}); err != nil {
								t.Fatal(err)
							}
						}
						run = func(ctx context.Context) { inf.RunWithContext(ctx) }
					}
					for _, a := range c.before {
						addOne(a)
					}
					// Re-deriving every listener goes over a map: those
					// lines are in map order, in both.
					before := dt.Sorted(log.Take())
					ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logr.Discard()))
					done := make(chan struct{})
					go func() { defer close(done); run(ctx) }()
					synctest.Wait()
					for _, a := range c.after {
						addOne(a)
					}
					got[impl] = append(append(before, "-- started"), log.Take()...)
					cancel()
					<-done
				}
				if d := cmp.Diff(got["client-go"], got["cachelab"]); d != "" {
					t.Errorf("logged (-client-go +cachelab):\n%s", d)
				}
				for _, l := range got["client-go"] {
					t.Log(l)
				}
			})
		})
	}
}
