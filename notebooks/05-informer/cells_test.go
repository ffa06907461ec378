package informer_test

import (
	"context"
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cachelab/cachelab/informer"
	"github.com/cachelab/cachelab/listwatch"
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
