package factory

import (
	"context"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/cachelab/cachelab/informer"
	"github.com/cachelab/cachelab/metrics"
	"github.com/cachelab/cachelab/reflector"
	"github.com/cachelab/cachelab/store"
)

// Client gives the ListerWatcher of one resource in one namespace ("" for
// all): what client-go's dynamic client gives as
// client.Resource(gvr).Namespace(namespace). Every informer the factory
// makes lists and watches through it.
type Client func(gvr schema.GroupVersionResource, namespace string) reflector.ListerWatcher

// TweakListOptionsFunc changes the options of every LIST and WATCH an
// informer of the factory sends (a label or field selector).
type TweakListOptionsFunc func(*metav1.ListOptions)

// NewInformerFunc makes an informer for InformerFor, from the factory's
// client and the resync period the factory has for its resource.
type NewInformerFunc func(client Client, resyncPeriod time.Duration) *informer.SharedIndexInformer

// An Option configures a Factory (client-go: SharedInformerOption).
type Option func(*Factory)

// WithNamespace limits every informer of the factory to one namespace
// (I5).
func WithNamespace(namespace string) Option { return func(f *Factory) { f.namespace = namespace } }

// WithTweakListOptions changes the options of every request of every
// informer of the factory (I5).
func WithTweakListOptions(tweak TweakListOptionsFunc) Option {
	return func(f *Factory) { f.tweak = tweak }
}

// WithTransform sets the transform of every informer the factory makes,
// as it makes it (I5).
func WithTransform(t store.TransformFunc) Option { return func(f *Factory) { f.transform = t } }

// WithCustomResyncConfig gives some resources a resync period of their
// own instead of the factory's default (I5).
func WithCustomResyncConfig(resync map[schema.GroupVersionResource]time.Duration) Option {
	return func(f *Factory) {
		for gvr, d := range resync {
			f.customResync[gvr] = d
		}
	}
}

// WithInformerName names the factory's informers for their metrics, each
// with its resource; Shutdown releases the name (I6).
func WithInformerName(name *metrics.InformerName) Option {
	return func(f *Factory) { f.informerName = name }
}

// WithInformerOptions is what every informer of the factory is built
// with, besides what the factory sets itself (resync, indexers,
// description, identifier): its stack, clock, metrics provider, trace.
// cachelab's own: client-go's informers take these from process-wide
// feature gates and the real clock.
func WithInformerOptions(o informer.Options) Option { return func(f *Factory) { f.base = o } }

// Factory hands out one shared informer per resource and starts, waits
// for and shuts down all of them at once. It mirrors client-go's dynamic
// shared informer factory (dynamic/dynamicinformer/informer.go), named by
// resource as cachelab's objects are unstructured, with the options of
// the typed one (informers/factory.go). See the package doc.
type Factory struct {
	client        Client
	defaultResync time.Duration
	namespace     string
	tweak         TweakListOptionsFunc
	transform     store.TransformFunc
	customResync  map[schema.GroupVersionResource]time.Duration
	informerName  *metrics.InformerName
	base          informer.Options

	mu        sync.Mutex
	informers map[schema.GroupVersionResource]*informer.SharedIndexInformer
	// started says which informers Start has started, so that Start can
	// be called again and start only the ones asked for since (I2).
	started map[schema.GroupVersionResource]bool
	// wg counts the informers' goroutines, which Shutdown waits for.
	wg           sync.WaitGroup
	shuttingDown bool
}

// New returns a factory whose informers list and watch through client,
// with resync period defaultResync unless an option says otherwise
// (client-go: NewSharedInformerFactoryWithOptions).
func New(client Client, defaultResync time.Duration, opts ...Option) *Factory {
	f := &Factory{
		client:        client,
		defaultResync: defaultResync,
		customResync:  map[schema.GroupVersionResource]time.Duration{},
		informers:     map[schema.GroupVersionResource]*informer.SharedIndexInformer{},
		started:       map[schema.GroupVersionResource]bool{},
	}
	for _, o := range opts {
		o(f)
	}
	return f
}

// NewFiltered is New for one namespace ("" for all) with a tweak of the
// list options (client-go: NewFilteredDynamicSharedInformerFactory).
func NewFiltered(client Client, defaultResync time.Duration, namespace string, tweak TweakListOptionsFunc) *Factory {
	return New(client, defaultResync, WithNamespace(namespace), WithTweakListOptions(tweak))
}

// ForResource returns the factory's informer for gvr: made on the first
// request, the same one after that (I1). It is not started until the
// next Start (I2). The informer indexes its objects by namespace, as
// client-go's does.
func (f *Factory) ForResource(gvr schema.GroupVersionResource) *GenericInformer {
	return &GenericInformer{gvr: gvr, informer: f.InformerFor(gvr, f.newInformer(gvr))}
}

// InformerFor returns the factory's informer for gvr, made by newFunc on
// the first request (with the resource's custom resync period, or the
// default, and the factory's transform), the same one after that (I1,
// I5): a way to give one resource an informer of one's own making.
func (f *Factory) InformerFor(gvr schema.GroupVersionResource, newFunc NewInformerFunc) *informer.SharedIndexInformer {
	f.mu.Lock()
	defer f.mu.Unlock()
	if inf, ok := f.informers[gvr]; ok {
		return inf
	}
	resync, ok := f.customResync[gvr]
	if !ok {
		resync = f.defaultResync
	}
	inf := newFunc(f.client, resync)
	if f.transform != nil {
		// A new informer has not started: this cannot fail.
		_ = inf.SetTransform(f.transform)
	}
	f.informers[gvr] = inf
	return inf
}

// newInformer is how ForResource makes an informer: over the client's
// ListerWatcher for the factory's namespace, each request tweaked.
func (f *Factory) newInformer(gvr schema.GroupVersionResource) NewInformerFunc {
	return func(client Client, resync time.Duration) *informer.SharedIndexInformer {
		o := f.base
		o.ResyncPeriod = resync
		o.Indexers = store.Indexers{store.NamespaceIndex: store.MetaNamespaceIndexFunc}
		o.ObjectDescription = gvr.String()
		if f.informerName != nil {
			o.Identifier = f.informerName.WithResource(gvr)
		}
		return informer.New(Tweaked(client(gvr, f.namespace), f.tweak), o)
	}
}

// Start starts, each on a goroutine of its own, every informer asked for
// and not started yet, and only those; after Shutdown, none (I2, I4).
// The informers run until ctx ends.
func (f *Factory) Start(ctx context.Context) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.shuttingDown {
		return
	}
	for gvr, inf := range f.informers {
		if f.started[gvr] {
			continue
		}
		f.wg.Go(func() { inf.Run(ctx) })
		f.started[gvr] = true
	}
}

// WaitForCacheSync waits until every started informer has synced, or ctx
// ends, and says which did: one entry per informer Start started, none for
// one asked for since (I3). (client-go's takes a stop channel.)
func (f *Factory) WaitForCacheSync(ctx context.Context) map[schema.GroupVersionResource]bool {
	return f.WaitForCacheSyncWithContext(ctx).Synced
}

// SyncResult sums up WaitForCacheSyncWithContext: which informers synced,
// and if not all did, why the wait stopped (context.Cause of its
// context).
type SyncResult struct {
	Err    error
	Synced map[schema.GroupVersionResource]bool
}

// WaitForCacheSyncWithContext is WaitForCacheSync with the cause of a
// failed wait (client-go's typed factory's).
func (f *Factory) WaitForCacheSyncWithContext(ctx context.Context) SyncResult {
	started := f.startedInformers()
	checkers := make([]informer.DoneChecker, 0, len(started))
	for _, inf := range started {
		checkers = append(checkers, inf.HasSyncedChecker())
	}
	informer.WaitFor(ctx, "" /* no logging */, checkers...)
	res := SyncResult{Synced: make(map[schema.GroupVersionResource]bool, len(started))}
	for gvr, inf := range started {
		res.Synced[gvr] = inf.HasSynced()
		if !res.Synced[gvr] {
			res.Err = context.Cause(ctx)
		}
	}
	return res
}

func (f *Factory) startedInformers() map[schema.GroupVersionResource]*informer.SharedIndexInformer {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[schema.GroupVersionResource]*informer.SharedIndexInformer{}
	for gvr, inf := range f.informers {
		if f.started[gvr] {
			out[gvr] = inf
		}
	}
	return out
}

// Shutdown marks the factory as shutting down, so that Start starts
// nothing more, and waits for the informers' goroutines to end; then it
// releases the informer name (I4, I6). It does not stop the informers:
// they stop when the context given to Start ends, and until then
// Shutdown waits.
func (f *Factory) Shutdown() {
	f.mu.Lock()
	f.shuttingDown = true
	f.mu.Unlock()
	f.wg.Wait()
	f.informerName.Release()
}

// GenericInformer is a resource's shared informer and a lister over its
// cache (client-go: informers.GenericInformer).
type GenericInformer struct {
	gvr      schema.GroupVersionResource
	informer *informer.SharedIndexInformer
}

// Informer is the shared informer.
func (g *GenericInformer) Informer() *informer.SharedIndexInformer { return g.informer }

// Lister lists the informer's cache.
func (g *GenericInformer) Lister() *informer.Lister {
	return informer.NewLister(g.informer.GetIndexer(), g.gvr.GroupResource())
}

// Tweaked is lw with tweak applied to the options of each request (nil:
// lw itself). It keeps lw's answer to whether watch-list is supported.
func Tweaked(lw reflector.ListerWatcher, tweak TweakListOptionsFunc) reflector.ListerWatcher {
	if tweak == nil {
		return lw
	}
	return &tweaked{lw: lw, ctx: reflector.ToListerWatcherWithContext(lw), tweak: tweak}
}

type tweaked struct {
	lw    reflector.ListerWatcher
	ctx   reflector.ListerWatcherWithContext
	tweak TweakListOptionsFunc
}

func (t *tweaked) List(o metav1.ListOptions) (runtime.Object, error) {
	t.tweak(&o)
	return t.lw.List(o)
}

func (t *tweaked) Watch(o metav1.ListOptions) (watch.Interface, error) {
	t.tweak(&o)
	return t.lw.Watch(o)
}

func (t *tweaked) ListWithContext(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
	t.tweak(&o)
	return t.ctx.ListWithContext(ctx, o)
}

func (t *tweaked) WatchWithContext(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	t.tweak(&o)
	return t.ctx.WatchWithContext(ctx, o)
}

// IsWatchListSemanticsUnSupported passes on lw's answer (false if it has
// none), as client-go's ToListWatcherWithWatchListSemantics does.
func (t *tweaked) IsWatchListSemanticsUnSupported() bool {
	u, ok := t.lw.(interface{ IsWatchListSemanticsUnSupported() bool })
	return ok && u.IsWatchListSemanticsUnSupported()
}
