package workqueue_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"
)

// client-go: queue.go Typed.Add, Get, Done (W2), free-running.
//
// The scripts compare each step exactly because a barrier orders every
// operation. Without one, 8 workers racing over 500 items hand items out
// in an order nobody can predict, on either side; what W2 still fixes is
// checked here on both sides alike: no two workers ever hold the same
// item, and an item added again while it is held is processed exactly
// once more. Each worker re-adds an item the first time it processes
// it, so every item must be processed exactly twice.
func TestQueueConcurrentWorkers(t *testing.T) {
	const items, workers = 500, 8
	want := map[string]int{}
	for i := range items {
		want[fmt.Sprint(i)] = 2
	}
	for _, k := range []kind{plain, delayingKind, rateLimitingKind} {
		ours, theirs := pair(k, clocktesting.NewFakeClock(time.Time{}), nil) // the clock never moves: no delays here
		for impl, q := range map[string]queue{"cachelab": ours, "client-go": theirs} {
			t.Run(kindNames[k]+"/"+impl, func(t *testing.T) {
				got := hammer(t, q, items, workers)
				if d := cmp.Diff(want, got); d != "" {
					t.Errorf("times each item was processed (-want +got):\n%s", d)
				}
			})
		}
	}
}

// hammer runs the workers over the items and returns how often each was
// processed.
func hammer(t *testing.T, q queue, items, workers int) map[string]int {
	var mu sync.Mutex
	held, count := map[string]bool{}, map[string]int{}
	var processed sync.WaitGroup
	processed.Add(2 * items)
	process := func(x string) {
		mu.Lock()
		if held[x] {
			t.Errorf("two workers hold %s at once", x)
		}
		held[x] = true
		count[x]++
		first := count[x] == 1
		mu.Unlock()
		if first {
			q.Add(x) // changed while being processed: must come back once
		}
		mu.Lock()
		held[x] = false
		mu.Unlock()
		q.Done(x)
		processed.Done()
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for x, shutdown := q.Get(); !shutdown; x, shutdown = q.Get() {
				process(x)
			}
		})
	}
	for i := range items {
		q.Add(fmt.Sprint(i))
	}
	processed.Wait()
	q.ShutDown()
	wg.Wait()
	return count
}
