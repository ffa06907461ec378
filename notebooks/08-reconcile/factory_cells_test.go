package reconcile_test

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/controller"
	"github.com/cachelab/cachelab/factory"
	"github.com/cachelab/cachelab/informer"
	"github.com/cachelab/cachelab/internal/dynclient"
	"github.com/cachelab/cachelab/internal/requestlog"
	"github.com/cachelab/cachelab/listwatch"
	"github.com/cachelab/cachelab/reflector"
)

var (
	podsGVR       = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	configMapsGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

// The recipe, from the factory down: two controllers ask one factory for
// the pods informer and get the same one (I1), so the server sees one
// watch-list for both; Start starts it (I2) and WaitForCacheSync says it
// synced (I3). client-go's dynamic factory, on the same etcd, sends the
// same request.
func Example_factory() {
	w := newWorld("web", "db")
	defer w.close()
	var requests requestLog
	f := factory.New(requests.client(w), 0)

	for _, name := range []string{"scaler", "labeler"} {
		pods := f.ForResource(podsGVR)
		reconcile := func(_ context.Context, key string) (controller.Result, error) {
			fmt.Println(name, "reconciles", key, "reading", read(pods.Lister(), key))
			return controller.Result{}, nil
		}
		c, _ := controller.New(w.ctx, controller.Options{Informer: pods.Informer(), Reconcile: reconcile})
		defer c.Queue().ShutDown()
		f.Start(w.ctx)
		fmt.Println(name, "started; synced:", f.WaitForCacheSync(w.ctx))
		informer.WaitFor(w.ctx, "", c.HasSyncedChecker())
		for c.Queue().Len() > 0 {
			c.ProcessNextWorkItem(w.ctx)
		}
	}
	fmt.Println("the same informer for both:", f.ForResource(podsGVR).Informer() == f.ForResource(podsGVR).Informer())
	fmt.Println("requests:", requests.lines())

	var cgRequests requestLog
	cg := dynamicinformer.NewDynamicSharedInformerFactory(dynclient.New(cgRequests.client(w)), 0)
	for range 2 {
		cg.ForResource(podsGVR).Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{})
	}
	cg.Start(w.ctx.Done())
	cg.WaitForCacheSync(w.ctx.Done())
	fmt.Println("client-go's requests:", cgRequests.lines())
	// Output:
	// scaler started; synced: map[/v1, Resource=pods:true]
	// scaler reconciles shop/db reading db@3
	// scaler reconciles shop/web reading web@2
	// labeler started; synced: map[/v1, Resource=pods:true]
	// labeler reconciles shop/db reading db@3
	// labeler reconciles shop/web reading web@2
	// the same informer for both: true
	// requests: [WATCH pods rv="" sendInitialEvents=true]
	// client-go's requests: [WATCH pods rv="" sendInitialEvents=true]
}

// The late informer: a controller asks for the configmaps informer after
// Start. Start started only what had been asked for (I2), so nothing
// lists configmaps; WaitForCacheSync answers for pods alone and says all
// is well (I3), while the configmaps informer's HasSynced stays false: a
// controller that waits on it waits forever (here, until its wait is
// called off). The next Start starts it, and only it. client-go's factory
// does the same.
func Example_lateInformer() {
	w := newWorld("web")
	defer w.close()
	var requests requestLog
	f := factory.New(requests.client(w), 0)
	f.ForResource(podsGVR)
	f.Start(w.ctx)
	fmt.Println("synced:", f.WaitForCacheSync(w.ctx))

	late := f.ForResource(configMapsGVR).Informer()
	fmt.Println("asked for configmaps after Start; synced:", f.WaitForCacheSync(w.ctx), "configmaps HasSynced:", late.HasSynced())
	gaveUp, giveUp := context.WithCancel(w.ctx)
	giveUp()
	fmt.Println("a controller waiting for configmaps got:", informer.WaitFor(gaveUp, "", late.HasSyncedChecker()))
	fmt.Println("requests:", requests.lines())

	f.Start(w.ctx)
	fmt.Println("after a second Start, synced:", f.WaitForCacheSync(w.ctx))
	fmt.Println("requests:", requests.lines())

	var cgRequests requestLog
	cg := dynamicinformer.NewDynamicSharedInformerFactory(dynclient.New(cgRequests.client(w)), 0)
	cg.ForResource(podsGVR)
	cg.Start(w.ctx.Done())
	cg.WaitForCacheSync(w.ctx.Done())
	cgLate := cg.ForResource(configMapsGVR).Informer()
	fmt.Println("client-go: synced:", cg.WaitForCacheSync(w.ctx.Done()), "configmaps HasSynced:", cgLate.HasSynced())
	// Output:
	// synced: map[/v1, Resource=pods:true]
	// asked for configmaps after Start; synced: map[/v1, Resource=pods:true] configmaps HasSynced: false
	// a controller waiting for configmaps got: false
	// requests: [WATCH pods rv="" sendInitialEvents=true]
	// after a second Start, synced: map[/v1, Resource=configmaps:true /v1, Resource=pods:true]
	// requests: [WATCH configmaps rv="" sendInitialEvents=true WATCH pods rv="" sendInitialEvents=true]
	// client-go: synced: map[/v1, Resource=pods:true] configmaps HasSynced: false
}

// requestLog is what a factory's informers asked the server, one line
// per LIST or WATCH, sorted (each informer runs on its own goroutine).
type requestLog struct{ requestlog.Log }

// client is a factory's client over the world's etcd, for pods and
// configmaps, each request written down.
func (r *requestLog) client(w *world) func(schema.GroupVersionResource, string) reflector.ListerWatcher {
	return func(gvr schema.GroupVersionResource, ns string) reflector.ListerWatcher {
		res := listwatch.Pods
		if gvr.Resource == "configmaps" {
			res = listwatch.Resource{Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespaced: true}
		}
		return r.Wrap(listwatch.NewListerWatcher(w.etcd.Client(), res, listwatch.Options{Namespace: ns}), gvr.Resource)
	}
}

func (r *requestLog) lines() []string { return r.Lines() }
