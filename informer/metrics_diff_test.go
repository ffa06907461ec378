package informer_test

import (
	"testing"

	"github.com/cachelab/cachelab/informer"
	dt "github.com/cachelab/cachelab/internal/difftest"
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
