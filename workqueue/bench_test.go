package workqueue_test

import (
	"fmt"
	"sync"
	"testing"

	cgwq "k8s.io/client-go/util/workqueue"

	"github.com/cachelab/cachelab/workqueue"
)

// benchQueue is what the throughput benchmark uses of a queue.
type benchQueue interface {
	Add(int)
	Get() (int, bool)
	Done(int)
	ShutDown()
}

// limitedQueue is what the AddRateLimited benchmark uses.
type limitedQueue interface {
	AddRateLimited(int)
	ShutDown()
}

var benchQueues = []struct {
	impl string
	new  func() benchQueue
}{
	{"cachelab", func() benchQueue { return workqueue.New[int]() }},
	{"client-go", func() benchQueue { return cgwq.NewTyped[int]() }},
}

// BenchmarkQueue measures, side by side (`benchstat -col /impl`):
//   - AddGetDone: one op is one item added by one producer and taken
//     through Get and Done by one of 1, 4 or 16 workers;
//   - AddRateLimited: one op is one AddRateLimited, on the real clock,
//     through the default controller limiter, cycling over 1000 items.
func BenchmarkQueue(b *testing.B) {
	for _, workers := range []int{1, 4, 16} {
		for _, q := range benchQueues {
			b.Run(fmt.Sprintf("op=AddGetDone/workers=%d/impl=%s", workers, q.impl), func(b *testing.B) {
				b.ReportAllocs()
				benchAddGetDone(b, q.new(), workers)
			})
		}
	}
	limited := []struct {
		impl string
		new  func() limitedQueue
	}{
		{"cachelab", func() limitedQueue {
			return workqueue.NewRateLimiting(workqueue.DefaultControllerRateLimiter[int](), workqueue.Options{})
		}},
		{"client-go", func() limitedQueue {
			return cgwq.NewTypedRateLimitingQueue(cgwq.DefaultTypedControllerRateLimiter[int]())
		}},
	}
	for _, q := range limited {
		b.Run("op=AddRateLimited/impl="+q.impl, func(b *testing.B) {
			b.ReportAllocs()
			rl := q.new()
			i := 0
			for b.Loop() {
				rl.AddRateLimited(i % 1000)
				i++
			}
			rl.ShutDown()
		})
	}
}

func benchAddGetDone(b *testing.B, q benchQueue, workers int) {
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				x, shutdown := q.Get()
				if shutdown {
					return
				}
				q.Done(x)
			}
		})
	}
	// b.N rather than b.Loop: the timer must keep running until the
	// workers have drained the queue.
	b.ResetTimer()
	for i := range b.N {
		q.Add(i)
	}
	q.ShutDown()
	wg.Wait()
}
