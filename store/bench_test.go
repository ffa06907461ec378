package store_test

import (
	"fmt"
	"testing"

	"k8s.io/client-go/tools/cache"

	. "github.com/cachelab/cachelab/internal/difftest"
	"github.com/cachelab/cachelab/store"
)

// indexer is the part of both stores the benchmarks use.
type indexer interface {
	Add(any) error
	Update(any) error
	Delete(any) error
	Get(any) (any, bool, error)
	List() []any
	ListKeys() []string
	ByIndex(string, string) ([]any, error)
	Index(string, any) ([]any, error)
	IndexKeys(string, string) ([]string, error)
	ListIndexFuncValues(string) []string
	Replace([]any, string) error
}

var impls = []struct {
	name string
	new  func() indexer
}{
	{"cachelab", func() indexer {
		return store.New(store.Options{Indexers: store.Indexers{"app": IndexByAppLabel, store.NamespaceIndex: store.MetaNamespaceIndexFunc}})
	}},
	{"client-go", func() indexer {
		return cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{"app": IndexByAppLabel, cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	}},
}

// BenchmarkStore measures each store operation on n objects, side by side:
// compare with `benchstat -col /impl`. One op is n calls (Add, Update,
// Delete, Get), one call (List, ByIndex: a tenth of the objects), or one
// Replace of n. BenchmarkStoreList measures the list-returning calls in
// more regimes.
func BenchmarkStore(b *testing.B) {
	for _, n := range BenchSizes {
		v1, v2 := BenchObjects(n, 1), BenchObjects(n, 2)
		filled := fillAll(v1)
		for i, impl := range impls {
			name := func(op string) string { return fmt.Sprintf("op=%s/n=%d/impl=%s", op, n, impl.name) }
			b.Run(name("Add"), func(b *testing.B) {
				b.ReportAllocs()
				cpu := StartCPU()
				defer cpu.Report(b)
				for b.Loop() {
					s := impl.new()
					for _, o := range v1 {
						_ = s.Add(o)
					}
				}
			})
			s := filled[i]
			b.Run(name("Update"), func(b *testing.B) {
				b.ReportAllocs()
				cpu := StartCPU()
				defer cpu.Report(b)
				for i := 0; b.Loop(); i++ {
					objs := v1
					if i%2 == 0 {
						objs = v2
					}
					for _, o := range objs {
						_ = s.Update(o)
					}
				}
			})
			b.Run(name("Delete"), func(b *testing.B) {
				b.ReportAllocs()
				cpu := StartCPU()
				defer cpu.Report(b)
				for b.Loop() {
					for _, o := range v1 {
						_ = s.Delete(o)
					}
					b.StopTimer()
					cpu.Stop()
					for _, o := range v1 {
						_ = s.Add(o)
					}
					cpu.Restart()
					b.StartTimer()
				}
			})
			b.Run(name("Get"), func(b *testing.B) {
				b.ReportAllocs()
				cpu := StartCPU()
				defer cpu.Report(b)
				for b.Loop() {
					for _, o := range v1 {
						_, _, _ = s.Get(o)
					}
				}
			})
			b.Run(name("List"), func(b *testing.B) {
				b.ReportAllocs()
				cpu := StartCPU()
				defer cpu.Report(b)
				for b.Loop() {
					_ = s.List()
				}
			})
			b.Run(name("ByIndex"), func(b *testing.B) {
				b.ReportAllocs()
				cpu := StartCPU()
				defer cpu.Report(b)
				for b.Loop() {
					_, _ = s.ByIndex("app", "app-3")
				}
			})
			b.Run(name("Replace"), func(b *testing.B) {
				b.ReportAllocs()
				cpu := StartCPU()
				defer cpu.Report(b)
				for b.Loop() {
					_ = s.Replace(append([]any(nil), v2...), "2")
				}
			})
		}
	}
}

// fillAll returns one store of each implementation holding objs. The
// benchmarks make them all before measuring any: an op that allocates
// pays for garbage collection in proportion to the live heap's growth, so
// both implementations must run with the same heap (the filled stores of
// both) or the one measured second looks cheaper.
func fillAll(objs []any) []indexer {
	out := make([]indexer, len(impls))
	for i, impl := range impls {
		out[i] = impl.new()
		for _, o := range objs {
			_ = out[i].Add(o)
		}
	}
	return out
}
