package deltafifo_test

import (
	"fmt"
	"math"
	syncatomic "sync/atomic"
	"testing"

	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/deltafifo"
	. "github.com/cachelab/cachelab/internal/difftest"
	"github.com/cachelab/cachelab/internal/meter"
	"github.com/cachelab/cachelab/metrics"
)

// queue is the part of the queues the benchmarks use.
type queue interface {
	Add(any) error
	Replace([]any, string) error
}

type queueImpl struct {
	name string
	new  func() queue
	pop  func(q queue) // pops one item, discarding it
}

var noop = func(any, bool) error { return nil }

// The classic stack's DeltaFIFO (with KnownObjects and Replaced deltas)
// and the default stack's RealFIFO (atomic, unlocking, bookmarks).
var queues = map[string][]queueImpl{
	"DeltaFIFO": {
		{"cachelab", func() queue {
			return deltafifo.NewDeltaFIFO(deltafifo.DeltaFIFOOptions{KnownObjects: NewKnown(), EmitDeltaTypeReplaced: true})
		}, func(q queue) { _, _ = q.(*deltafifo.DeltaFIFO).Pop(noop) }},
		{"client-go", func() queue {
			return cache.NewDeltaFIFOWithOptions(cache.DeltaFIFOOptions{KeyFunction: cache.MetaNamespaceKeyFunc, KnownObjects: NewKnown(), EmitDeltaTypeReplaced: true})
		}, func(q queue) { _, _ = q.(*cache.DeltaFIFO).Pop(noop) }},
	},
	"RealFIFO+metrics": {
		{"cachelab", func() queue {
			id, _ := meter.ReserveCachelab("bench") // left reserved: names are fresh
			return deltafifo.NewRealFIFO(deltafifo.RealFIFOOptions{AtomicEvents: true, UnlockWhileProcessing: true, EmitDeltaTypeBookmark: true,
				Identifier: id, MetricsProvider: lastValues{}})
		}, func(q queue) { _, _ = q.(*deltafifo.RealFIFO).Pop(noop) }},
		{"client-go", func() queue {
			id, _ := meter.ReserveClientGo("bench")
			return cache.NewRealFIFOWithOptions(cache.RealFIFOOptions{KeyFunction: cache.MetaNamespaceKeyFunc, AtomicEvents: true, UnlockWhileProcessing: true, EmitDeltaTypeBookmark: true,
				Identifier: id, MetricsProvider: cgLastValues{}})
		}, func(q queue) { _, _ = q.(*cache.RealFIFO).Pop(noop) }},
	},
	"RealFIFO": {
		{"cachelab", func() queue {
			return deltafifo.NewRealFIFO(deltafifo.RealFIFOOptions{AtomicEvents: true, UnlockWhileProcessing: true, EmitDeltaTypeBookmark: true})
		}, func(q queue) { _, _ = q.(*deltafifo.RealFIFO).Pop(noop) }},
		{"client-go", func() queue {
			return cache.NewRealFIFOWithOptions(cache.RealFIFOOptions{KeyFunction: cache.MetaNamespaceKeyFunc, AtomicEvents: true, UnlockWhileProcessing: true, EmitDeltaTypeBookmark: true})
		}, func(q queue) { _, _ = q.(*cache.RealFIFO).Pop(noop) }},
	},
}

// BenchmarkQueue measures, side by side (`benchstat -col /impl`), one
// op = n Adds then n Pops on a new queue ("AddPop"), and one Replace of n
// objects into a new queue ("Replace"). RealFIFO+metrics is a named
// RealFIFO publishing to gauges that keep their last value (R8).
func BenchmarkQueue(b *testing.B) {
	for _, kind := range []string{"DeltaFIFO", "RealFIFO", "RealFIFO+metrics"} {
		for _, n := range BenchSizes {
			objs := BenchObjects(n, 1)
			for _, impl := range queues[kind] {
				prefix := fmt.Sprintf("queue=%s/n=%d", kind, n)
				b.Run(prefix+"/op=AddPop/impl="+impl.name, func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						q := impl.new()
						for _, o := range objs {
							_ = q.Add(o)
						}
						for range objs {
							impl.pop(q)
						}
					}
				})
				b.Run(prefix+"/op=Replace/impl="+impl.name, func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						_ = impl.new().Replace(append([]any(nil), objs...), "1")
					}
				})
			}
		}
	}
}

// lastValue is an instrument that keeps its last value, as a Prometheus
// gauge does, at the cost of one atomic store.
type lastValue struct{ v *syncatomic.Uint64 }

func (g lastValue) Set(v float64)     { g.v.Store(math.Float64bits(v)) }
func (g lastValue) Observe(v float64) { g.v.Store(math.Float64bits(v)) }

func newLastValue() lastValue { return lastValue{new(syncatomic.Uint64)} }

type lastValues struct{}

func (lastValues) NewQueuedItemMetric(metrics.InformerNameAndResource) metrics.GaugeMetric {
	return newLastValue()
}
func (lastValues) NewProcessingLatencyMetric(metrics.InformerNameAndResource) metrics.HistogramMetric {
	return newLastValue()
}
func (lastValues) NewStoreResourceVersionMetric(metrics.InformerNameAndResource) metrics.GaugeMetric {
	return newLastValue()
}

type cgLastValues struct{}

func (cgLastValues) NewQueuedItemMetric(cache.InformerNameAndResource) cache.GaugeMetric {
	return newLastValue()
}
func (cgLastValues) NewProcessingLatencyMetric(cache.InformerNameAndResource) cache.HistogramMetric {
	return newLastValue()
}
func (cgLastValues) NewStoreResourceVersionMetric(cache.InformerNameAndResource) cache.GaugeMetric {
	return newLastValue()
}
