package deltafifo_test

import (
	"fmt"
	"testing"

	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/deltafifo"
	. "github.com/cachelab/cachelab/internal/difftest"
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
// objects into a new queue ("Replace").
func BenchmarkQueue(b *testing.B) {
	for _, kind := range []string{"DeltaFIFO", "RealFIFO"} {
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
