package store_test

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	. "github.com/cachelab/cachelab/internal/difftest"
)

// listOps are the calls that return lists: one op is one call. The index
// queries ask for a tenth of the objects ("app-3"); ListIndexFuncValues
// returns the ten values of the app index.
var listOps = []struct {
	name string
	call func(s indexer)
}{
	{"List", func(s indexer) { _ = s.List() }},
	{"ListKeys", func(s indexer) { _ = s.ListKeys() }},
	{"ByIndex", func(s indexer) { _, _ = s.ByIndex("app", "app-3") }},
	{"Index", func(s indexer) { _, _ = s.Index("app", app3) }},
	{"IndexKeys", func(s indexer) { _, _ = s.IndexKeys("app", "app-3") }},
	{"ListIndexFuncValues", func(s indexer) { _ = s.ListIndexFuncValues("app") }},
}

// app3 is an object Index matches against: it has the label app=app-3.
var app3 = &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
	Namespace: "ns-0", Name: "probe", Labels: map[string]string{"app": "app-3"}}}

// listRegimes are what happens to the store before each call. An
// informer's store is mostly in the second or third: one event written,
// then a lister call. The written key sorts in the middle of the store.
var listRegimes = []struct {
	name  string
	write func(s indexer, i int, stored [2]any, extra any)
}{
	{"none", func(indexer, int, [2]any, any) {}},
	{"add-delete", func(s indexer, i int, _ [2]any, extra any) { // a key comes, then goes
		if i%2 == 0 {
			_ = s.Add(extra)
		} else {
			_ = s.Delete(extra)
		}
	}},
	{"update", func(s indexer, i int, stored [2]any, _ any) { // a stored key changes
		_ = s.Update(stored[i%2])
	}},
}

// BenchmarkStoreList measures every list-returning call on n objects, in
// each regime, side by side: compare with `benchstat -col /impl`. One op
// is the regime's write (if any) and one call.
func BenchmarkStoreList(b *testing.B) {
	for _, n := range BenchSizes {
		v1, v2 := BenchObjects(n, 1), BenchObjects(n, 2)
		mid := n/2 + 5 // namespace ns-5: the middle of the key order
		stored := [2]any{v2[mid], v1[mid]}
		extra := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
			Namespace: "ns-4", Name: "zz-extra", ResourceVersion: "3", Labels: map[string]string{"app": "app-3"}}}
		filled := fillAll(v1)
		for i, impl := range impls {
			s := filled[i]
			for _, op := range listOps {
				for _, r := range listRegimes {
					b.Run(fmt.Sprintf("op=%s/n=%d/after=%s/impl=%s", op.name, n, r.name, impl.name), func(b *testing.B) {
						b.ReportAllocs()
						cpu := StartCPU()
						defer cpu.Report(b)
						for i := 0; b.Loop(); i++ {
							r.write(s, i, stored, extra)
							op.call(s)
						}
					})
					_ = s.Delete(extra)
				}
			}
		}
	}
}
