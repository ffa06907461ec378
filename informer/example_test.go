package informer_test

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cachelab/cachelab/informer"
	"github.com/cachelab/cachelab/listwatch"
)

// An informer over embedded etcd in the default stack: the initial list,
// then an update and a delete, as its handler hears them.
func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	etcd, err := listwatch.StartEmbedded(ctx, listwatch.EmbeddedOptions{})
	if err != nil {
		panic(err)
	}
	defer etcd.Close()
	writer := listwatch.NewWriter(etcd.Client(), listwatch.Pods, listwatch.WriterOptions{})
	web, err := writer.Create(ctx, examplePod("web"))
	if err != nil {
		panic(err)
	}

	inf := informer.New(listwatch.NewListerWatcher(etcd.Client(), listwatch.Pods, listwatch.Options{}),
		informer.Options{Stack: informer.Default, ExampleObject: &unstructured.Unstructured{}})
	heard := make(chan string, 10)
	name := func(obj any) string {
		u := obj.(*unstructured.Unstructured)
		return u.GetName() + "@" + u.GetResourceVersion()
	}
	reg, _ := inf.AddEventHandler(informer.ResourceEventHandlerDetailedFuncs{
		AddFunc:    func(obj any, initial bool) { heard <- fmt.Sprintf("OnAdd %s initial=%v", name(obj), initial) },
		UpdateFunc: func(old, obj any) { heard <- fmt.Sprintf("OnUpdate %s -> %s", name(old), name(obj)) },
		DeleteFunc: func(obj any) { heard <- fmt.Sprintf("OnDelete %s", name(obj)) },
	})
	done := make(chan struct{})
	go func() { defer close(done); inf.Run(ctx) }()

	fmt.Println(<-heard)
	informer.WaitForCacheSync(ctx, nil, reg.HasSynced)
	fmt.Println("synced; cache:", inf.GetStore().ListKeys())

	web.SetLabels(map[string]string{"tier": "front"})
	if _, err := writer.Update(ctx, web); err != nil {
		panic(err)
	}
	fmt.Println(<-heard)
	if _, err := writer.Delete(ctx, "default", "web", listwatch.Preconditions{}); err != nil {
		panic(err)
	}
	fmt.Println(<-heard)
	fmt.Println("cache:", inf.GetStore().ListKeys(), "at rv", inf.LastSyncResourceVersion())
	cancel()
	<-done
	// Output:
	// OnAdd web@2 initial=true
	// synced; cache: [default/web]
	// OnUpdate web@2 -> web@3
	// OnDelete web@4
	// cache: [] at rv 4
}

func examplePod(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("Pod")
	u.SetNamespace("default")
	u.SetName(name)
	return u
}
