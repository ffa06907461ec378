package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	cgworkqueue "k8s.io/client-go/util/workqueue"

	"github.com/cachelab/cachelab/controller"
	"github.com/cachelab/cachelab/informer"
)

// Level-triggered: three updates of web while a worker holds it are three
// enqueues, and one more reconcile, after Done, which reads the latest
// version from the cache. (The reconcile makes the updates itself, as a
// user editing web at that moment would, and waits until the handler has
// queued each: the only way to be sure they happen while it holds web.)
func Example_levelTriggered() {
	w := newWorld("web")
	defer w.close()
	t := newTimeline()
	var c *controller.Controller
	first := true
	reconcile := func(_ context.Context, key string) (controller.Result, error) {
		fmt.Println("reconcile", key, "reads", read(w.lister, key))
		if first {
			first = false
			for _, v := range []string{"1", "2", "3"} {
				w.label("web", v)
				fmt.Println("  meanwhile", <-t.enqueued)
			}
			fmt.Println("  queued while web is held:", c.Queue().Len())
		}
		return controller.Result{}, nil
	}
	c, _ = controller.New(w.ctx, controller.Options{Informer: w.inf, Reconcile: reconcile, Clock: t.clock, Trace: t.trace})
	defer c.Queue().ShutDown()
	w.start()
	informer.WaitFor(w.ctx, "", c.HasSyncedChecker())
	fmt.Println(<-t.enqueued)

	c.ProcessNextWorkItem(w.ctx)
	fmt.Println("after Done, queued:", c.Queue().Len())
	c.ProcessNextWorkItem(w.ctx)
	fmt.Println("after Done, queued:", c.Queue().Len())
	// Output:
	// handler: enqueue shop/web add
	// reconcile shop/web reads web@2
	//   meanwhile handler: enqueue shop/web update
	//   meanwhile handler: enqueue shop/web update
	//   meanwhile handler: enqueue shop/web update
	//   queued while web is held: 0
	// after Done, queued: 1
	// reconcile shop/web reads web@5
	// after Done, queued: 0
}

// An error backs the key off, 5ms, 10ms, 20ms, on the controller's
// (fake) clock; a success forgets its failures. The delays are the
// default controller rate limiter's, and client-go's says the same.
func Example_backoff() {
	w := newWorld("web")
	defer w.close()
	t := newTimeline(controller.Reconciled, controller.RateLimited, controller.Forget)
	failures := 3
	reconcile := func(_ context.Context, key string) (controller.Result, error) {
		if failures > 0 {
			failures--
			return controller.Result{}, errors.New("not yet")
		}
		return controller.Result{}, nil
	}
	c, _ := controller.New(w.ctx, controller.Options{Informer: w.inf, Reconcile: reconcile, Clock: t.clock, Trace: t.trace})
	defer c.Queue().ShutDown()
	w.start()
	informer.WaitFor(w.ctx, "", c.HasSyncedChecker())
	<-t.enqueued

	for _, wait := range []time.Duration{0, 5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond} {
		t.advance(c.Queue(), wait)
		c.ProcessNextWorkItem(w.ctx)
		fmt.Println("        NumRequeues:", c.Queue().NumRequeues("shop/web"))
	}
	cg := cgworkqueue.DefaultTypedControllerRateLimiter[string]()
	fmt.Println("client-go's DefaultTypedControllerRateLimiter:", cg.When("shop/web"), cg.When("shop/web"), cg.When("shop/web"))
	// Output:
	// +0s     reconcile: returned shop/web error "not yet"
	// +0s     workqueue: requeue-rate-limited shop/web 5ms
	//         NumRequeues: 1
	// +5ms    reconcile: returned shop/web error "not yet"
	// +5ms    workqueue: requeue-rate-limited shop/web 10ms
	//         NumRequeues: 2
	// +15ms   reconcile: returned shop/web error "not yet"
	// +15ms   workqueue: requeue-rate-limited shop/web 20ms
	//         NumRequeues: 3
	// +35ms   reconcile: returned shop/web ok
	// +35ms   workqueue: forget shop/web
	//         NumRequeues: 0
	// client-go's DefaultTypedControllerRateLimiter: 5ms 10ms 20ms
}

// RequeueAfter: on success, the key's failures are forgotten and it comes
// back after exactly that long; with an error, the error wins: the delay
// is dropped and the key backs off.
func Example_requeueAfter() {
	w := newWorld("web")
	defer w.close()
	t := newTimeline(controller.Reconciled, controller.RateLimited, controller.Forget, controller.AddAfter)
	results := []struct {
		after time.Duration
		err   error
	}{
		{err: errors.New("not yet")},
		{after: 2 * time.Second},
		{after: time.Hour, err: errors.New("not yet")},
		{},
	}
	reconcile := func(_ context.Context, key string) (controller.Result, error) {
		r := results[0]
		results = results[1:]
		return controller.Result{RequeueAfter: r.after}, r.err
	}
	c, _ := controller.New(w.ctx, controller.Options{Informer: w.inf, Reconcile: reconcile, Clock: t.clock, Trace: t.trace})
	defer c.Queue().ShutDown()
	w.start()
	informer.WaitFor(w.ctx, "", c.HasSyncedChecker())
	<-t.enqueued

	for _, wait := range []time.Duration{0, 5 * time.Millisecond, 2 * time.Second, 5 * time.Millisecond} {
		t.advance(c.Queue(), wait)
		c.ProcessNextWorkItem(w.ctx)
	}
	// Output:
	// +0s     reconcile: returned shop/web error "not yet"
	// +0s     workqueue: requeue-rate-limited shop/web 5ms
	// +5ms    reconcile: returned shop/web requeue-after 2s
	// +5ms    workqueue: forget shop/web
	// +5ms    workqueue: add-after shop/web 2s
	// +2.005s reconcile: returned shop/web error "not yet" (requeue-after 1h0m0s ignored)
	// +2.005s workqueue: requeue-rate-limited shop/web 5ms
	// +2.01s  reconcile: returned shop/web ok
	// +2.01s  workqueue: forget shop/web
}

// A delete is a key like any other: the handler queues it, and the
// reconcile, reading the cache, finds nothing. That is its only way to
// know: whatever it must clean up, it finds from the key.
func Example_delete() {
	w := newWorld("web")
	defer w.close()
	t := newTimeline(controller.Reconciled)
	reconcile := func(_ context.Context, key string) (controller.Result, error) {
		fmt.Println("reconcile", key, "reads", read(w.lister, key))
		return controller.Result{}, nil
	}
	c, _ := controller.New(w.ctx, controller.Options{Informer: w.inf, Reconcile: reconcile, Clock: t.clock, Trace: t.trace})
	defer c.Queue().ShutDown()
	w.start()
	informer.WaitFor(w.ctx, "", c.HasSyncedChecker())
	fmt.Println(<-t.enqueued)
	c.ProcessNextWorkItem(w.ctx)

	w.remove("web")
	fmt.Println(<-t.enqueued)
	c.ProcessNextWorkItem(w.ctx)
	// Output:
	// handler: enqueue shop/web add
	// reconcile shop/web reads web@2
	// +0s     reconcile: returned shop/web ok
	// handler: enqueue shop/web delete
	// reconcile shop/web reads not found
	// +0s     reconcile: returned shop/web ok
}

// A delete the informer missed. While its watch is down (held), db is
// deleted, web created, and etcd compacts its history, so the informer
// cannot catch up by watching: it relists, after a backoff on its relist
// clock, which the cell moves when the reflector waits on it. The relist
// no longer has db: the handler gets a tombstone, and queues the key it
// carries; the reconcile finds the key gone, as for any delete.
func Example_tombstone() {
	relist := newWaitingClock()
	w := newWorldWith(informer.Options{RelistClock: relist, Rand: rand.New(rand.NewPCG(1, 2))}, "db")
	defer w.close()
	t := newTimeline()
	reconcile := func(_ context.Context, key string) (controller.Result, error) {
		fmt.Println("reconcile", key, "reads", read(w.lister, key))
		return controller.Result{}, nil
	}
	c, _ := controller.New(w.ctx, controller.Options{Informer: w.inf, Reconcile: reconcile, Clock: t.clock, Trace: t.trace})
	defer c.Queue().ShutDown()
	w.start()
	informer.WaitFor(w.ctx, "", c.HasSyncedChecker())
	fmt.Println(<-t.enqueued)
	c.ProcessNextWorkItem(w.ctx)

	w.lw.HoldWatches() // the informer's next watch waits ...
	w.lw.DropWatches() // ... and its current one ends
	w.remove("db")
	w.create("web")
	w.compact()
	w.lw.ReleaseWatches()
	for heard := 0; heard < 2; { // db's tombstone and web's add, once the relist is in
		select {
		case <-relist.waiting:
			relist.Step(time.Minute)
		case e := <-t.enqueued:
			fmt.Println(e)
			heard++
		}
	}
	c.ProcessNextWorkItem(w.ctx)
	c.ProcessNextWorkItem(w.ctx)
	// Output:
	// handler: enqueue shop/db add
	// reconcile shop/db reads db@2
	// handler: enqueue shop/db tombstone
	// handler: enqueue shop/web add
	// reconcile shop/db reads not found
	// reconcile shop/web reads web@4
}

// The staleness guard. The reconcile writes web (the server answers with
// resourceVersion 6), then fails on a later step; 5ms later its key is
// back, but the informer has not yet heard of rv 6. Without the guard
// the reconcile would read web@5, its own past. With it, the reconcile is
// skipped and the key backs off, until the cache has reached 6. This
// cell plays the informer by hand (it writes the cache itself, and queues
// the key as the handler would), so the cache lags exactly as long as
// the story needs.
func Example_stalenessGuard() {
	t := newTimeline(controller.Stale, controller.Reconciled, controller.RateLimited)
	inf := informer.New(nil, informer.Options{}) // never run: the cell is the informer
	indexer := inf.GetIndexer()
	lister := informer.NewLister(indexer, schema.GroupResource{Resource: "pods"})
	wrote := false
	reconcile := func(_ context.Context, key string) (controller.Result, error) {
		fmt.Println("        reconcile", key, "reads", read(lister, key))
		if !wrote {
			wrote = true
			return controller.Result{Wrote: "6"}, errors.New("wrote web@6, then failed")
		}
		return controller.Result{}, nil
	}
	c, _ := controller.New(context.Background(), controller.Options{Informer: inf, Reconcile: reconcile,
		StalenessGuard: true, Clock: t.clock, Trace: t.trace})
	defer c.Queue().ShutDown()
	_ = indexer.Add(object("web", "5"))
	c.Queue().Add("shop/web")
	fmt.Println("cache at rv", indexer.LastStoreSyncResourceVersion())

	c.ProcessNextWorkItem(context.Background())
	t.advance(c.Queue(), 5*time.Millisecond)
	c.ProcessNextWorkItem(context.Background())
	_ = indexer.Update(object("web", "6")) // the informer hears of the write
	c.Queue().Add("shop/web")              // and its handler queues the key
	fmt.Println("cache at rv", indexer.LastStoreSyncResourceVersion())
	c.ProcessNextWorkItem(context.Background())
	// Output:
	// cache at rv 5
	//         reconcile shop/web reads web@5
	// +0s     reconcile: returned shop/web error "wrote web@6, then failed" wrote@6
	// +0s     workqueue: requeue-rate-limited shop/web 5ms
	// +5ms    reconcile: stale shop/web store@5 < wrote@6
	// +5ms    workqueue: requeue-rate-limited shop/web 10ms
	// cache at rv 6
	//         reconcile shop/web reads web@6
	// +5ms    reconcile: returned shop/web ok
}
