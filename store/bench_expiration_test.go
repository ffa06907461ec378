package store_test

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/client-go/tools/cache"

	. "github.com/cachelab/cachelab/internal/difftest"
	"github.com/cachelab/cachelab/store"
)

var ttlImpls = []struct {
	name string
	new  func(ttl time.Duration) store.Store
}{
	{"cachelab", func(ttl time.Duration) store.Store { return store.NewTTLStore(store.MetaNamespaceKeyFunc, ttl) }},
	{"client-go", func(ttl time.Duration) store.Store { return cache.NewTTLStore(cache.MetaNamespaceKeyFunc, ttl) }},
}

// BenchmarkExpirationCache measures NewTTLStore side by side on the real
// clock, the only one both NewTTLStores have (compare with
// `benchstat -col /impl`), on a cache filled with n objects:
//   - AddGet with a TTL of 1h: one op is an Add (a fresh timestamp) and a
//     Get that finds the object alive;
//   - AddGet with a TTL of 1ns: the Get finds it expired and deletes it;
//   - List with a TTL of 1h: one op is a List of the n objects, each
//     checked against the policy under the cache's lock.
func BenchmarkExpirationCache(b *testing.B) {
	for _, n := range BenchSizes {
		objs := BenchObjects(n, 1)
		for _, bc := range []struct {
			op  string
			ttl time.Duration
		}{{"AddGet", time.Hour}, {"AddGet", time.Nanosecond}, {"List", time.Hour}} {
			caches := make([]store.Store, len(ttlImpls)) // all filled before any is measured
			for i, impl := range ttlImpls {
				caches[i] = impl.new(bc.ttl)
				for _, o := range objs {
					_ = caches[i].Add(o)
				}
			}
			for i, impl := range ttlImpls {
				c := caches[i]
				b.Run(fmt.Sprintf("op=%s/ttl=%v/n=%d/impl=%s", bc.op, bc.ttl, n, impl.name), func(b *testing.B) {
					b.ReportAllocs()
					cpu := StartCPU()
					defer cpu.Report(b)
					for k := 0; b.Loop(); k++ {
						if bc.op == "List" {
							_ = c.List()
							continue
						}
						o := objs[k%n]
						_ = c.Add(o)
						_, _, _ = c.Get(o)
					}
				})
			}
		}
	}
}
