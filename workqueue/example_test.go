package workqueue_test

import (
	"fmt"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/cachelab/cachelab/workqueue"
)

// Adds of a waiting item coalesce, and an item added while a worker holds
// it is queued again only when the worker is done.
func ExampleQueue() {
	q := workqueue.New[string]()
	q.Add("web")
	q.Add("db")
	q.Add("web")
	fmt.Println("len:", q.Len())
	x, _ := q.Get()
	q.Add(x) // changed again while being reconciled
	fmt.Println("got", x, "len:", q.Len())
	q.Done(x)
	fmt.Println("done", x, "len:", q.Len())
	q.ShutDown()
	for {
		x, shutdown := q.Get()
		if shutdown {
			break
		}
		fmt.Println("got", x)
		q.Done(x)
	}
	// Output:
	// len: 2
	// got web len: 1
	// done web len: 2
	// got db
	// got web
}

// A failing item backs off exponentially until it is forgotten. Manual
// mode starts no goroutine: the clock moves, then Flush adds what is due.
func ExampleRateLimitingQueue() {
	clk := clocktesting.NewFakeClock(time.Unix(0, 0))
	q := workqueue.NewRateLimiting(
		workqueue.NewItemExponentialFailureRateLimiter[string](5*time.Millisecond, time.Second),
		workqueue.Options{Clock: clk, Manual: true})
	defer q.ShutDown()
	for range 3 {
		q.AddRateLimited("web")
		next, _ := q.Flush()
		clk.Step(next)
		q.Flush()
		x, _ := q.Get()
		fmt.Printf("retry %d of %s after %s\n", q.NumRequeues(x), x, next)
		q.Done(x)
	}
	q.Forget("web")
	fmt.Println("forgotten:", q.NumRequeues("web"))
	// Output:
	// retry 1 of web after 5ms
	// retry 2 of web after 10ms
	// retry 3 of web after 20ms
	// forgotten: 0
}

// With Options.Manual nothing happens behind the caller's back: items wait
// until the clock has moved and Flush is called, and a second AddAfter
// can bring an item forward but never push it back.
func ExampleDelayingQueue_Flush() {
	clk := clocktesting.NewFakeClock(time.Unix(0, 0))
	q := workqueue.NewDelaying[string](workqueue.Options{Clock: clk, Manual: true})
	defer q.ShutDown()
	q.AddAfter("web", 3*time.Second)
	q.AddAfter("db", time.Second)
	q.AddAfter("web", 2*time.Second) // forward: now due at 2s
	q.AddAfter("db", time.Hour)      // back: ignored, still due at 1s
	next, _ := q.Flush()
	fmt.Println("waiting:", q.Waiting(), "len:", q.Len(), "next in", next)
	clk.Step(2 * time.Second)
	q.Flush()
	fmt.Println("waiting:", q.Waiting(), "len:", q.Len())
	for q.Len() > 0 {
		x, _ := q.Get()
		fmt.Println("got", x)
		q.Done(x)
	}
	// Output:
	// waiting: 2 len: 0 next in 1s
	// waiting: 0 len: 2
	// got db
	// got web
}
