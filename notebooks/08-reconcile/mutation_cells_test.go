package reconcile_test

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/cachelab/cachelab/controller"
	"github.com/cachelab/cachelab/informer"
	"github.com/cachelab/cachelab/store"
)

// Reading your own write through the mutation cache. A reconcile marks
// web reconciled and asks to come back in a second; kube-apiserver's
// watch cache is held meanwhile (as in reconcile-stale-cache-guard), so
// when web comes back neither informer has heard of the write. Through
// the informer's store the reconcile reads web@2, from before its
// write; through the mutation cache it reads web@3, its own write, and
// has nothing left to do. client-go's MutationCache, over client-go's
// informer on the same watch cache and given the same write, answers the
// same. Once the watch cache is released, the informers catch up and
// the store says web@3 too.
func Example_mutationCache() {
	w := newCachedWorld("web")
	defer w.close()
	t := newTimeline()
	mc := store.NewIntegerResourceVersionMutationCache(klog.Background(), w.inf.GetStore(), w.inf.GetIndexer(), time.Minute, false)
	cgMC := cache.NewIntegerResourceVersionMutationCache(klog.Background(), w.cg.GetStore(), w.cg.GetIndexer(), time.Minute, false)
	reconcile := func(ctx context.Context, key string) (controller.Result, error) {
		fmt.Printf("reconcile %s: the store says %s, the mutation cache %s (client-go's %s)\n",
			key, read(w.lister, key), readThrough(mc, key), readThrough(cgMC, key))
		obj, _, _ := mc.GetByKey(key)
		web := obj.(*unstructured.Unstructured).DeepCopy()
		if web.GetLabels()["reconciled"] == "yes" {
			fmt.Println("  reconciled already: nothing to do")
			return controller.Result{}, nil
		}
		web.SetLabels(map[string]string{"reconciled": "yes"})
		written, err := w.pods.Update(ctx, web)
		if err != nil {
			return controller.Result{}, err
		}
		mc.Mutation(written)
		cgMC.Mutation(written)
		fmt.Printf("  wrote %s@%s\n", written.GetName(), written.GetResourceVersion())
		return controller.Result{RequeueAfter: time.Second}, nil
	}
	c, _ := controller.New(w.ctx, controller.Options{Informer: w.inf, Reconcile: reconcile, Clock: t.clock, Trace: t.trace})
	defer c.Queue().ShutDown()
	w.start()
	informer.WaitFor(w.ctx, "", c.HasSyncedChecker())
	<-t.enqueued // web's add, queued
	<-w.cgSeen   // and client-go's informer has web@2
	w.api.HoldCache()

	c.ProcessNextWorkItem(w.ctx)
	t.advance(c.Queue(), time.Second)
	c.ProcessNextWorkItem(w.ctx)

	w.api.ReleaseCache()
	fmt.Println(<-t.enqueued, "(client-go's informer has", <-w.cgSeen+")")
	c.ProcessNextWorkItem(w.ctx)
	// Output:
	// reconcile shop/web: the store says web@2, the mutation cache web@2 (client-go's web@2)
	//   wrote web@3
	// reconcile shop/web: the store says web@2, the mutation cache web@3 (client-go's web@3)
	//   reconciled already: nothing to do
	// handler: enqueue shop/web update (client-go's informer has web@3)
	// reconcile shop/web: the store says web@3, the mutation cache web@3 (client-go's web@3)
	//   reconciled already: nothing to do
}

// readThrough is read, through a mutation cache: cachelab's or
// client-go's, which answer GetByKey alike.
func readThrough(mc interface {
	GetByKey(key string) (any, bool, error)
}, key string) string {
	obj, exists, err := mc.GetByKey(key)
	switch {
	case err != nil:
		return err.Error()
	case !exists:
		return "not found"
	}
	m := obj.(metav1.Object)
	return m.GetName() + "@" + m.GetResourceVersion()
}
