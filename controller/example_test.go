package controller_test

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/cachelab/cachelab/controller"
	"github.com/cachelab/cachelab/informer"
	"github.com/cachelab/cachelab/listwatch"
	"github.com/cachelab/cachelab/store"
)

// A controller stepped by hand: each ProcessNextWorkItem is one turn of a
// worker. The reconcile reads the cache through a Lister, fails the first
// time (the key comes back after 5ms), then succeeds; a delete is a key
// like any other, found gone from the cache.
func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	etcd, err := listwatch.StartEmbedded(ctx, listwatch.EmbeddedOptions{})
	if err != nil {
		panic(err)
	}
	defer etcd.Close()
	writer := listwatch.NewWriter(etcd.Client(), listwatch.Pods, listwatch.WriterOptions{})
	if _, err := writer.Create(ctx, examplePod("web")); err != nil {
		panic(err)
	}
	inf := informer.New(listwatch.NewListerWatcher(etcd.Client(), listwatch.Pods, listwatch.Options{}),
		informer.Options{Stack: informer.Default, ExampleObject: &unstructured.Unstructured{}})
	lister := informer.NewLister(inf.GetIndexer(), schema.GroupResource{Resource: "pods"})

	reconcile := failOnce(lister)
	trace := func(e controller.Event) {
		if e.Kind == controller.RateLimited || e.Kind == controller.Forget {
			fmt.Println(e)
		}
	}
	c, err := controller.New(ctx, controller.Options{Informer: inf, Reconcile: reconcile, Trace: trace})
	if err != nil {
		panic(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); inf.Run(ctx) }()
	informer.WaitFor(ctx, "", c.HasSyncedChecker())

	c.ProcessNextWorkItem(ctx) // fails: back in 5ms
	c.ProcessNextWorkItem(ctx) // waits for it, then succeeds
	if _, err := writer.Delete(ctx, "default", "web", listwatch.Preconditions{}); err != nil {
		panic(err)
	}
	c.ProcessNextWorkItem(ctx)
	c.Queue().ShutDown()
	fmt.Println("after shutdown, more work:", c.ProcessNextWorkItem(ctx))
	cancel()
	<-done
	// Output:
	// reconcile default/web read: rv 2
	// workqueue: requeue-rate-limited default/web 5ms
	// reconcile default/web read: rv 2
	// workqueue: forget default/web
	// reconcile default/web read: not found
	// workqueue: forget default/web
	// after shutdown, more work: false
}

// failOnce is the example's reconcile: it reads the key from the cache,
// says what it found, and fails the first time it finds the object.
func failOnce(lister *informer.Lister) controller.ReconcileFunc {
	failed := false
	return func(_ context.Context, key string) (controller.Result, error) {
		ns, name, _ := store.SplitMetaNamespaceKey(key)
		obj, err := lister.ByNamespace(ns).Get(name)
		switch {
		case apierrors.IsNotFound(err):
			fmt.Println("reconcile", key, "read: not found")
			return controller.Result{}, nil
		case err != nil:
			return controller.Result{}, err
		}
		fmt.Println("reconcile", key, "read: rv", obj.(*unstructured.Unstructured).GetResourceVersion())
		if !failed {
			failed = true
			return controller.Result{}, errors.New("not yet")
		}
		return controller.Result{}, nil
	}
}

func examplePod(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("Pod")
	u.SetNamespace("default")
	u.SetName(name)
	return u
}
