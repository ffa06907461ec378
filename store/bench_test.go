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
	Get(any) (any, bool, error)
	List() []any
	ByIndex(string, string) ([]any, error)
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
// compare with `benchstat -col /impl`. One op is n calls (Add, Update, Get),
// one call (List, ByIndex: a tenth of the objects), or one Replace of n.
func BenchmarkStore(b *testing.B) {
	for _, n := range BenchSizes {
		v1, v2 := BenchObjects(n, 1), BenchObjects(n, 2)
		filled := func(new func() indexer) indexer {
			s := new()
			for _, o := range v1 {
				_ = s.Add(o)
			}
			return s
		}
		for _, impl := range impls {
			name := func(op string) string { return fmt.Sprintf("op=%s/n=%d/impl=%s", op, n, impl.name) }
			b.Run(name("Add"), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					s := impl.new()
					for _, o := range v1 {
						_ = s.Add(o)
					}
				}
			})
			s := filled(impl.new)
			b.Run(name("Update"), func(b *testing.B) {
				b.ReportAllocs()
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
			b.Run(name("Get"), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					for _, o := range v1 {
						_, _, _ = s.Get(o)
					}
				}
			})
			b.Run(name("List"), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					_ = s.List()
				}
			})
			b.Run(name("ByIndex"), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					_, _ = s.ByIndex("app", "app-3")
				}
			})
			b.Run(name("Replace"), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					_ = s.Replace(append([]any(nil), v2...), "2")
				}
			})
		}
	}
}
