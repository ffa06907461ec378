package informer_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/deltafifo"
	"github.com/cachelab/cachelab/informer"
	dt "github.com/cachelab/cachelab/internal/difftest"
	"github.com/cachelab/cachelab/internal/meter"
)

// client-go: shared_informer.go NewSharedIndexInformerWithOptions
// (Identifier, InformerMetricsProvider); controller.go newQueueFIFO (P20,
// R8, S6)
//
// A named informer publishes its queue's depth (RealFIFO only: the
// classic stack's DeltaFIFO has no metrics) and its store's
// resourceVersion.
func TestInformerMetrics(t *testing.T) {
	inBoth(t, dt.InformerConfig{Metered: true}, func(w *dt.InformerWorld) {
		w.Create(pod("ns/a"))
		w.AddHandler("h", dt.HandlerConfig{})
		w.Start()
		w.Create(pod("ns/b"))
		w.Settle()
		w.Delete(pod("ns/a"))
		w.Settle()
	}, map[informer.Stack][]string{
		informer.Default: {
			"metrics: new store-resource-version name=<informer> resource=/v1, Resource=pods reserved=true",
			"metrics: new queued-items name=<informer> resource=/v1, Resource=pods reserved=true",
			"metrics: new processing-latency name=<informer> resource=/v1, Resource=pods reserved=true",
			"metrics: map[queued-items:0 store-resource-version:4]",
		},
		informer.Classic: {
			"metrics: new store-resource-version name=<informer> resource=/v1, Resource=pods reserved=true",
			"metrics: map[store-resource-version:4]",
		},
	})
}

// client-go: the_real_fifo.go addToItems_locked (R8). With processing
// held on one object, the next two wait in the queue, and the depth says
// so. (Only the default stack: a held DeltaFIFO holds the reflector too.)
// Each write settles before the next so that the held object is popped
// alone; how many deltas one pop takes otherwise depends on timing.
func TestInformerMetricsQueueDepth(t *testing.T) {
	inStacks(t, bothStacks[:1], dt.InformerConfig{Metered: true, GateIndex: true}, func(w *dt.InformerWorld) {
		w.AddHandler("h", dt.HandlerConfig{})
		w.Start()
		w.HoldProcessing()
		w.Create(pod("ns/g", dt.Label(dt.LabelGate, "x")))
		w.Settle()
		w.Create(pod("ns/c"))
		w.Settle()
		w.Create(pod("ns/d"))
		w.Settle()
		w.ReleaseProcessing()
		w.Settle()
	}, both(
		"metrics: map[queued-items:1 store-resource-version:1]",
		"metrics: map[queued-items:2 store-resource-version:1]",
		"metrics: map[queued-items:0 store-resource-version:4]",
	))
}

// client-go: controller.go newQueueFIFO and controller.HasSyncedChecker;
// the_real_fifo.go and delta_fifo.go Name (P20, P16): a queue is named
// "RealFIFO"/"DeltaFIFO", a plain informer's "<queue> <object type>", and
// a named informer's queue takes the informer's name; a plain controller's
// checker carries its queue's name.
func TestQueueAndControllerNames(t *testing.T) {
	type names struct{ Plain, PlainNamed, RealFIFO, RealFIFONamed, DeltaFIFO string }
	for _, st := range bothStacks {
		t.Run(string(st), func(t *testing.T) {
			if st == informer.Classic {
				clientfeaturestesting.SetFeatureDuringTest(t, features.InOrderInformers, false)
				clientfeaturestesting.SetFeatureDuringTest(t, features.WatchListClient, false)
			}
			clID, cgID, release := meter.Reserve("names")
			defer release()
			obj := &unstructured.Unstructured{}
			var cl, cg names
			_, c := informer.NewInformerWithOptions(informer.InformerOptions{ListerWatcher: dt.NewServer(), ObjectType: obj, Stack: st})
			cl.Plain = c.HasSyncedChecker().Name()
			_, c = informer.NewInformerWithOptions(informer.InformerOptions{ListerWatcher: dt.NewServer(), ObjectType: obj, Stack: st, Identifier: clID})
			cl.PlainNamed = c.HasSyncedChecker().Name()
			cl.RealFIFO = deltafifo.NewRealFIFO(deltafifo.RealFIFOOptions{AtomicEvents: true}).Name()
			cl.RealFIFONamed = deltafifo.NewRealFIFO(deltafifo.RealFIFOOptions{AtomicEvents: true, Name: "q", Identifier: clID}).Name()
			cl.DeltaFIFO = deltafifo.NewDeltaFIFO(deltafifo.DeltaFIFOOptions{}).Name()

			_, g := cache.NewInformerWithOptions(cache.InformerOptions{ListerWatcher: dt.NewServer(), ObjectType: obj})
			cg.Plain = g.HasSyncedChecker().Name()
			_, g = cache.NewInformerWithOptions(cache.InformerOptions{ListerWatcher: dt.NewServer(), ObjectType: obj, Identifier: cgID})
			cg.PlainNamed = g.HasSyncedChecker().Name()
			cg.RealFIFO = cache.NewRealFIFOWithOptions(cache.RealFIFOOptions{KeyFunction: cache.MetaNamespaceKeyFunc, AtomicEvents: true}).Name()
			cg.RealFIFONamed = cache.NewRealFIFOWithOptions(cache.RealFIFOOptions{KeyFunction: cache.MetaNamespaceKeyFunc, AtomicEvents: true, Name: "q", Identifier: cgID}).Name()
			cg.DeltaFIFO = cache.NewDeltaFIFOWithOptions(cache.DeltaFIFOOptions{}).Name()
			if d := cmp.Diff(cg, cl); d != "" {
				t.Errorf("names (-client-go +cachelab):\n%s", d)
			}
			t.Logf("%+v", cl)
		})
	}
}
