package heap_test

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"

	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/heap"
	. "github.com/cachelab/cachelab/internal/difftest"
)

// benchHeap is the part of both heaps the benchmark uses.
type benchHeap interface {
	Add(any) error
	Update(any) error
	Pop() (any, error)
}

var benchImpls = []struct {
	name string
	new  func() benchHeap
}{
	{"cachelab", func() benchHeap { return heap.NewHeap(jobKey, lessFuncs["prio"]) }},
	{"client-go", func() benchHeap { return cache.NewHeap(jobKey, cache.LessFunc(lessFuncs["prio"])) }},
}

// BenchmarkHeap measures, side by side on a heap of n jobs with random
// priorities (compare with `benchstat -col /impl`):
//   - AddPop: one op is a Pop and an Add of the popped key with a new
//     priority, so the heap stays at n;
//   - Update: one op is an Update of a stored key to a new priority,
//     which moves it (heap.Fix).
func BenchmarkHeap(b *testing.B) {
	for _, n := range BenchSizes {
		names := make([]string, n)
		for i := range names {
			names[i] = "job-" + strconv.Itoa(i)
		}
		prios := rand.New(rand.NewPCG(1, uint64(n))).Perm(4 * n) // later priorities to draw from
		heaps := make([]benchHeap, len(benchImpls))              // all filled before any is measured
		for i, impl := range benchImpls {
			heaps[i] = impl.new()
			for k, name := range names {
				_ = heaps[i].Add(job{name, prios[k]})
			}
		}
		for i, impl := range benchImpls {
			h := heaps[i]
			b.Run(fmt.Sprintf("op=AddPop/n=%d/impl=%s", n, impl.name), func(b *testing.B) {
				b.ReportAllocs()
				cpu := StartCPU()
				defer cpu.Report(b)
				for k := 0; b.Loop(); k++ {
					obj, _ := h.Pop()
					_ = h.Add(job{obj.(job).Name, prios[k%len(prios)]})
				}
			})
			b.Run(fmt.Sprintf("op=Update/n=%d/impl=%s", n, impl.name), func(b *testing.B) {
				b.ReportAllocs()
				cpu := StartCPU()
				defer cpu.Report(b)
				for k := 0; b.Loop(); k++ {
					_ = h.Update(job{names[k%n], prios[(k*7)%len(prios)]})
				}
			})
		}
	}
}
