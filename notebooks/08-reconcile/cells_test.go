package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/client-go/tools/cache"
	cgworkqueue "k8s.io/client-go/util/workqueue"

	"github.com/cachelab/cachelab/controller"
	"github.com/cachelab/cachelab/informer"
	"github.com/cachelab/cachelab/store"
	"github.com/cachelab/cachelab/workqueue"
)

// The handler's key function on the three things a handler can be given:
// an object, a cluster-scoped object, and a tombstone for a delete the
// informer only noticed on a relist (whose object may be stale: the key
// is all the handler takes from it). client-go's key function is given
// the same (its own tombstone type) and says the same.
func Example_keys() {
	web, node := object("web", "2"), &unstructured.Unstructured{}
	node.SetName("node-1")
	tombstone := store.DeletedFinalStateUnknown{Key: "shop/db", Obj: object("db", "4")}
	for _, obj := range []any{web, node, tombstone} {
		key, _ := store.DeletionHandlingMetaNamespaceKeyFunc(obj)
		cgObj := obj
		if t, ok := obj.(store.DeletedFinalStateUnknown); ok {
			cgObj = cache.DeletedFinalStateUnknown{Key: t.Key, Obj: t.Obj}
		}
		cgKey, _ := cache.DeletionHandlingMetaNamespaceKeyFunc(cgObj)
		fmt.Printf("%-32T key %-11s client-go's key %q\n", obj, fmt.Sprintf("%q", key), cgKey)
	}
	_, err := store.DeletionHandlingMetaNamespaceKeyFunc("not an object")
	_, cgErr := cache.DeletionHandlingMetaNamespaceKeyFunc("not an object")
	fmt.Printf("a string: no key (%v); client-go: no key either: %t\n", err != nil, cgErr != nil)
	// Output:
	// *v1.PartialObjectMetadata        key "shop/web"  client-go's key "shop/web"
	// *unstructured.Unstructured       key "node-1"    client-go's key "node-1"
	// store.DeletedFinalStateUnknown   key "shop/db"   client-go's key "shop/db"
	// a string: no key (true); client-go: no key either: true
}

// queue is what the next cell uses of a work queue; cachelab's
// workqueue.Queue and client-go's workqueue.Typed both have it.
type queue interface {
	Add(key string)
	Get() (key string, shutdown bool)
	Done(key string)
	Len() int
}

// The dirty and processing sets: one story told to cachelab's queue and
// to client-go's, step by step. Two workers take turns; web changes while
// the first holds it.
func Example_dirtyAndProcessing() {
	story := []struct{ op, key, why string }{
		{"Add", "web", ""},
		{"Add", "db", ""},
		{"Add", "web", "queued already: the two adds are one"},
		{"Get", "", "worker 1 holds web"},
		{"Add", "web", "web is held: dirty, not queued"},
		{"Get", "", "worker 2 gets db; web is not handed out"},
		{"Done", "web", "web was added while held: queued again"},
		{"Get", "", "worker 1 again"},
		{"Done", "db", ""},
		{"Done", "web", ""},
	}
	cl, cg := workqueue.New[string](), cgworkqueue.NewTyped[string]()
	same := true
	for _, s := range story {
		step := fmt.Sprintf("%s(%s)", s.op, s.key)
		for i, q := range []queue{cl, cg} {
			got := ""
			switch s.op {
			case "Add":
				q.Add(s.key)
			case "Done":
				q.Done(s.key)
			case "Get":
				key, _ := q.Get()
				got = "Get() -> " + key
			}
			if i == 0 {
				if got != "" {
					step = got
				}
				fmt.Println(strings.TrimSpace(fmt.Sprintf("%-12s Len %d  %s", step, q.Len(), s.why)))
			} else if got != "" && got != step || q.Len() != cl.Len() {
				same = false
			}
		}
	}
	fmt.Println("client-go's queue did the same at every step:", same)
	// Output:
	// Add(web)     Len 1
	// Add(db)      Len 2
	// Add(web)     Len 2  queued already: the two adds are one
	// Get() -> web Len 1  worker 1 holds web
	// Add(web)     Len 1  web is held: dirty, not queued
	// Get() -> db  Len 0  worker 2 gets db; web is not handed out
	// Done(web)    Len 1  web was added while held: queued again
	// Get() -> web Len 0  worker 1 again
	// Done(db)     Len 0
	// Done(web)    Len 0
	// client-go's queue did the same at every step: true
}

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

// Forgetting Forget: one key whose reconciles fail and succeed in turn,
// ten times. With Forget after each success, every failure waits 5ms.
// Without it, the limiter never hears of the successes, and the delays
// grow as if the key had failed every time, to 16m40s. client-go's
// limiter, given the same calls, returns the same.
func Example_forgetForgotten() {
	const key = "shop/web"
	for _, forgets := range []bool{true, false} {
		cl := workqueue.NewItemExponentialFailureRateLimiter[string](5*time.Millisecond, 1000*time.Second)
		cg := cgworkqueue.NewTypedItemExponentialFailureRateLimiter[string](5*time.Millisecond, 1000*time.Second)
		var waits []time.Duration
		same := true
		for turn := range 40 {
			if turn%2 == 1 { // a success
				if forgets {
					cl.Forget(key)
					cg.Forget(key)
				}
				continue
			}
			d := cl.When(key) // a failure: AddRateLimited asks When
			same = same && d == cg.When(key)
			waits = append(waits, d)
		}
		fmt.Printf("Forget on success %-5t: the failures wait %v ... %v, NumRequeues %d; client-go the same: %t\n",
			forgets, waits[:5], waits[len(waits)-1], cl.NumRequeues(key), same)
	}
	// Output:
	// Forget on success true : the failures wait [5ms 5ms 5ms 5ms 5ms] ... 5ms, NumRequeues 0; client-go the same: true
	// Forget on success false: the failures wait [5ms 10ms 20ms 40ms 80ms] ... 16m40s, NumRequeues 20; client-go the same: true
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

// resourceVersions compared, by cachelab's controller and by
// apimachinery's util/resourceversion (K6): decimal integers of any
// length; "", "0" and leading zeros cannot be compared.
func Example_compareResourceVersions() {
	for _, p := range [][2]string{
		{"9", "10"}, {"10", "10"}, {"11", "10"},
		{"123456789012345678901234567890", "99"},
		{"", "10"}, {"0", "10"}, {"010", "10"}, {"10", "1e3"},
	} {
		n, err := controller.CompareResourceVersions(p[0], p[1])
		cgN, cgErr := resourceversion.CompareResourceVersion(p[0], p[1])
		got := fmt.Sprint(n)
		if err != nil {
			got = "cannot compare"
		}
		fmt.Printf("%-32q %-6q %-15s same in apimachinery: %t\n", p[0], p[1], got, n == cgN && (err == nil) == (cgErr == nil))
	}
	// Output:
	// "9"                              "10"   -1              same in apimachinery: true
	// "10"                             "10"   0               same in apimachinery: true
	// "11"                             "10"   1               same in apimachinery: true
	// "123456789012345678901234567890" "99"   1               same in apimachinery: true
	// ""                               "10"   cannot compare  same in apimachinery: true
	// "0"                              "10"   cannot compare  same in apimachinery: true
	// "010"                            "10"   cannot compare  same in apimachinery: true
	// "10"                             "1e3"  cannot compare  same in apimachinery: true
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
