package reconcile_test

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/cachelab/cachelab/apistorage"
	"github.com/cachelab/cachelab/informer"
	"github.com/cachelab/cachelab/listwatch"
)

// cachedWorld is a world with kube-apiserver's watch cache between etcd
// and the informers (package apistorage, as chapter 7 runs it), and two
// informers on it: cachelab's, with a Lister, and client-go's. Holding
// the watch cache (api.HoldCache) makes both fall behind etcd at once,
// as a slow watch does. The cache's clock is fake and never moves, so it
// sends no bookmarks of its own.
type cachedWorld struct {
	ctx    context.Context
	pods   *listwatch.Writer
	api    *apistorage.Server
	inf    *informer.SharedIndexInformer
	lister *informer.Lister
	cg     cache.SharedIndexInformer
	cgSeen chan string // "web@3" for every add and update client-go's informer hands its handler
	close  func()
	cancel context.CancelFunc
	done   chan struct{} // each informer's run sends once when it ends
}

// newCachedWorld starts etcd, creates the pods shop/<name> in order, and
// starts the watch cache; the informers start with start.
func newCachedWorld(names ...string) *cachedWorld {
	ctx, cancel := context.WithCancel(context.Background())
	etcd, err := listwatch.StartEmbedded(ctx, listwatch.EmbeddedOptions{})
	if err != nil {
		panic(err)
	}
	w := &cachedWorld{ctx: ctx, cancel: cancel, done: make(chan struct{}, 2), pods: listwatch.NewWriter(etcd.Client(), listwatch.Pods, listwatch.WriterOptions{}), cgSeen: make(chan string, 100)}
	for _, name := range names {
		if _, err := w.pods.Create(ctx, newPod(name)); err != nil {
			panic(err)
		}
	}
	clock := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	if w.api, err = apistorage.New(ctx, etcd.Client(), listwatch.Pods, apistorage.Options{Cache: true, Clock: clock}); err != nil {
		panic(err)
	}
	lw := w.api.ListerWatcher("")
	w.inf = informer.New(lw, informer.Options{ExampleObject: &unstructured.Unstructured{}})
	w.lister = informer.NewLister(w.inf.GetIndexer(), schema.GroupResource{Resource: "pods"})
	w.cg = cache.NewSharedIndexInformer(lw, &unstructured.Unstructured{}, 0, cache.Indexers{})
	seen := func(obj any) {
		u := obj.(*unstructured.Unstructured)
		w.cgSeen <- u.GetName() + "@" + u.GetResourceVersion()
	}
	_, _ = w.cg.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: seen, UpdateFunc: func(_, obj any) { seen(obj) }})
	w.close = func() { cancel(); w.api.Close(); _ = etcd.Close() }
	return w
}

// start runs both informers until the world closes, and waits for
// client-go's to sync.
func (w *cachedWorld) start() {
	go func() { w.inf.Run(w.ctx); w.done <- struct{}{} }()
	go func() { w.cg.RunWithContext(w.ctx); w.done <- struct{}{} }()
	cache.WaitForCacheSync(w.ctx.Done(), w.cg.HasSynced)
	stopServers := w.close
	w.close = func() {
		// The informers end with the context, before the servers go.
		w.cancel()
		<-w.done
		<-w.done
		stopServers()
	}
}
