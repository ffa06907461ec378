package informer_test

import (
	"context"
	"fmt"
	"sort"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"

	"github.com/cachelab/cachelab/informer"
	"github.com/cachelab/cachelab/internal/meter"
	"github.com/cachelab/cachelab/listwatch"
	"github.com/cachelab/cachelab/metrics"
)

// newPod is a pod object for the writer to create.
func newPod(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("Pod")
	u.SetNamespace("shop")
	u.SetName(name)
	return u
}

// An informer over an embedded etcd: the handler hears the initial list
// (isInInitialList=true), then live changes. HasSynced turns true once the
// initial list is in the cache; the registration's own HasSynced once this
// handler has returned from every initial OnAdd.
func ExampleSharedIndexInformer() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	etcd, err := listwatch.StartEmbedded(ctx, listwatch.EmbeddedOptions{})
	if err != nil {
		panic(err)
	}
	defer etcd.Close()
	writer := listwatch.NewWriter(etcd.Client(), listwatch.Pods, listwatch.WriterOptions{})
	for _, name := range []string{"web", "db"} {
		if _, err := writer.Create(ctx, newPod(name)); err != nil {
			panic(err)
		}
	}

	lw := listwatch.NewListerWatcher(etcd.Client(), listwatch.Pods, listwatch.Options{})
	inf := informer.New(lw, informer.Options{ExampleObject: &unstructured.Unstructured{}})
	heard := make(chan string, 10)
	name := func(obj any) string {
		u := obj.(*unstructured.Unstructured)
		return u.GetName() + "@" + u.GetResourceVersion()
	}
	reg, _ := inf.AddEventHandler(informer.ResourceEventHandlerDetailedFuncs{
		AddFunc:    func(obj any, initial bool) { heard <- fmt.Sprintf("OnAdd %s initial=%t", name(obj), initial) },
		UpdateFunc: func(old, obj any) { heard <- fmt.Sprintf("OnUpdate %s -> %s", name(old), name(obj)) },
		DeleteFunc: func(obj any) { heard <- fmt.Sprintf("OnDelete %s", name(obj)) },
	})
	done := make(chan struct{})
	go func() { defer close(done); inf.Run(ctx) }()

	initial := []string{<-heard, <-heard} // a watch-list's initial list comes in map order
	if initial[0] > initial[1] {
		initial[0], initial[1] = initial[1], initial[0]
	}
	fmt.Println(initial[0])
	fmt.Println(initial[1])
	informer.WaitForCacheSync(ctx, nil, reg.HasSynced)
	fmt.Println("informer synced:", inf.HasSynced(), "handler synced:", reg.HasSynced())

	if _, err := writer.Create(ctx, newPod("cache")); err != nil {
		panic(err)
	}
	fmt.Println(<-heard)
	if _, err := writer.Delete(ctx, "shop", "db", listwatch.Preconditions{}); err != nil {
		panic(err)
	}
	fmt.Println(<-heard)
	keys := inf.GetStore().ListKeys()
	sort.Strings(keys)
	fmt.Println("cache:", keys, "at rv", inf.LastSyncResourceVersion())
	cancel()
	<-done
	// Output:
	// OnAdd db@3 initial=true
	// OnAdd web@2 initial=true
	// informer synced: true handler synced: true
	// OnAdd cache@4 initial=false
	// OnDelete db@5
	// cache: [shop/cache shop/web] at rv 5
}

// A typed view of an informer: the handler gets *unstructured.Unstructured
// without a type assertion, and OnDelete gets a DeletedObject, which says
// whether the informer saw the delete itself or only inferred it from a
// relist (then FinalStateUnknown is set and the object may be stale).
func ExampleNewTypedSharedIndexInformer() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	etcd, err := listwatch.StartEmbedded(ctx, listwatch.EmbeddedOptions{})
	if err != nil {
		panic(err)
	}
	defer etcd.Close()
	writer := listwatch.NewWriter(etcd.Client(), listwatch.Pods, listwatch.WriterOptions{})
	if _, err := writer.Create(ctx, newPod("web")); err != nil {
		panic(err)
	}

	lw := listwatch.NewListerWatcher(etcd.Client(), listwatch.Pods, listwatch.Options{})
	inf := informer.NewTypedSharedIndexInformer[*unstructured.Unstructured](
		informer.New(lw, informer.Options{ExampleObject: &unstructured.Unstructured{}}))
	heard := make(chan string, 10)
	reg, _ := inf.AddTypedEventHandler(informer.TypedResourceEventHandlerFuncs[*unstructured.Unstructured]{
		AddFunc: func(pod *unstructured.Unstructured) { heard <- "OnAdd " + pod.GetName() },
		DeleteFunc: func(d informer.DeletedObject[*unstructured.Unstructured]) {
			heard <- fmt.Sprintf("OnDelete %s, final state unknown: %t", d.GetKey(), d.FinalStateUnknown != nil)
		},
	})
	done := make(chan struct{})
	go func() { defer close(done); inf.Run(ctx) }()

	fmt.Println(<-heard)
	informer.WaitFor(ctx, "", reg.HasSyncedChecker()) // no polling
	if _, err := writer.Delete(ctx, "shop", "web", listwatch.Preconditions{}); err != nil {
		panic(err)
	}
	fmt.Println(<-heard)
	cancel()
	<-done
	// Output:
	// OnAdd web
	// OnDelete shop/web, final state unknown: false
}

// The plain informer under the shared one: a store and one handler, which
// runs on the processing goroutine itself. While it runs, nothing else is
// processed.
func ExampleNewInformerWithOptions() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	etcd, err := listwatch.StartEmbedded(ctx, listwatch.EmbeddedOptions{})
	if err != nil {
		panic(err)
	}
	defer etcd.Close()
	writer := listwatch.NewWriter(etcd.Client(), listwatch.Pods, listwatch.WriterOptions{})
	if _, err := writer.Create(ctx, newPod("web")); err != nil {
		panic(err)
	}

	heard := make(chan string, 10)
	cache, controller := informer.NewInformerWithOptions(informer.InformerOptions{
		ListerWatcher: listwatch.NewListerWatcher(etcd.Client(), listwatch.Pods, listwatch.Options{}),
		ObjectType:    &unstructured.Unstructured{},
		Handler: informer.ResourceEventHandlerFuncs{
			AddFunc: func(obj any) { heard <- "OnAdd " + obj.(*unstructured.Unstructured).GetName() },
		},
	})
	done := make(chan struct{})
	go func() { defer close(done); controller.Run(ctx) }()

	fmt.Println(<-heard)
	if _, err := writer.Create(ctx, newPod("db")); err != nil {
		panic(err)
	}
	fmt.Println(<-heard)
	keys := cache.ListKeys()
	sort.Strings(keys)
	fmt.Println("cache:", keys, "synced:", controller.HasSynced())
	cancel()
	<-done
	// Output:
	// OnAdd web
	// OnAdd db
	// cache: [shop/db shop/web] synced: true
}

// A named informer publishes metrics (client-go v0.36): the provider is
// asked for a gauge of the queue's depth, a histogram of processing time
// and a gauge of the store's resourceVersion. A second informer for the
// same name and resource gets none: its series would collide.
func ExampleOptions_metrics() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	etcd, err := listwatch.StartEmbedded(ctx, listwatch.EmbeddedOptions{})
	if err != nil {
		panic(err)
	}
	defer etcd.Close()
	writer := listwatch.NewWriter(etcd.Client(), listwatch.Pods, listwatch.WriterOptions{})
	if _, err := writer.Create(ctx, newPod("web")); err != nil {
		panic(err)
	}

	name, err := metrics.NewInformerName("chapter-05")
	if err != nil {
		panic(err)
	}
	defer name.Release()
	pods := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	scrape := meter.New() // keeps each instrument's last value
	inf := informer.New(listwatch.NewListerWatcher(etcd.Client(), listwatch.Pods, listwatch.Options{}), informer.Options{
		ExampleObject:   &unstructured.Unstructured{},
		Identifier:      name.WithResource(pods),
		MetricsProvider: scrape.Provider(),
	})
	heard := make(chan string, 10)
	inf.AddEventHandler(informer.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { heard <- obj.(*unstructured.Unstructured).GetResourceVersion() },
	})
	done := make(chan struct{})
	go func() { defer close(done); inf.Run(ctx) }()
	<-heard
	if _, err := writer.Create(ctx, newPod("db")); err != nil {
		panic(err)
	}
	rv := <-heard

	depth, _ := scrape.Value(meter.QueuedItems)
	storeRV, _ := scrape.Value(meter.StoreRV)
	fmt.Println("queued items:", depth)
	fmt.Println("store resourceVersion:", storeRV, "(db was created at", rv+")")
	fmt.Println("a second pods informer named chapter-05 publishes:", name.WithResource(pods).Reserved())
	cancel()
	<-done
	// Output:
	// queued items: 0
	// store resourceVersion: 3 (db was created at 3)
	// a second pods informer named chapter-05 publishes: false
}

// A plain informer's handler runs on the processing loop, which Run runs
// itself: a panic in the handler comes out of Run (after being logged),
// where the caller can recover it. A shared informer's handler runs on a
// goroutine of its own, and the same panic ends the process.
func ExampleNewInformerWithOptions_panic() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	etcd, err := listwatch.StartEmbedded(ctx, listwatch.EmbeddedOptions{})
	if err != nil {
		panic(err)
	}
	defer etcd.Close()
	writer := listwatch.NewWriter(etcd.Client(), listwatch.Pods, listwatch.WriterOptions{})
	if _, err := writer.Create(ctx, newPod("web")); err != nil {
		panic(err)
	}

	_, controller := informer.NewInformerWithOptions(informer.InformerOptions{
		ListerWatcher: listwatch.NewListerWatcher(etcd.Client(), listwatch.Pods, listwatch.Options{}),
		ObjectType:    &unstructured.Unstructured{},
		Handler: informer.ResourceEventHandlerFuncs{
			AddFunc: func(obj any) { panic("bug in the handler for " + obj.(*unstructured.Unstructured).GetName()) },
		},
	})
	// The panic is also logged through ctx's logger ("Observed a panic"):
	// silenced here.
	quiet := klog.NewContext(ctx, logr.Discard())
	func() {
		defer func() { fmt.Println("Run panicked:", recover()) }()
		controller.Run(quiet)
	}()
	cancel() // the reflector is still running: stop it
	// Output:
	// Run panicked: bug in the handler for web
}
