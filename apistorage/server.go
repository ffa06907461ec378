package apistorage

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/cacher"
	"k8s.io/apiserver/pkg/storage/etcd3"
	etcdfeature "k8s.io/apiserver/pkg/storage/feature"
	"k8s.io/utils/clock"

	"github.com/cachelab/cachelab/listwatch"
)

// Options configures a Server.
type Options struct {
	// Cache puts kube-apiserver's watch cache (the cacher and its cache
	// delegator) in front of the etcd3 store, as every kube-apiserver
	// runs by default. Without it, requests go straight to etcd3, as in a
	// kube-apiserver started with --watch-cache=false.
	Cache bool
	// Clock drives the cacher's timers (bookmarks, the history window,
	// how long a consistent read waits) and every watch's TimeoutSeconds;
	// the real clock if nil. A simulation gives its fake clock.
	Clock clock.WithTicker
	// Name names the server in a Source ("apiserver-2"), where a client
	// talks to more than one; "" for none.
	Name string
	// HistoryWindow is how long the cache keeps events (kube-apiserver's
	// default, and the least the cacher accepts: 75 s).
	HistoryWindow time.Duration
}

// DefaultHistoryWindow is kube-apiserver's events history window.
const DefaultHistoryWindow = 75 * time.Second

// Server is kube-apiserver's storage layer for one resource, over one
// etcd: k8s.io/apiserver's etcd3 store and, with Options.Cache, its watch
// cache. ListerWatcher gives the client's view of it.
type Server struct {
	res    listwatch.Resource
	opts   Options
	client *clientv3.Client

	compactor etcd3Compactor
	etcd      storage.Interface // without the cache: the etcd3 store, deadlines stripped
	closeEtcd func()            // stops that store's own goroutines

	watchListOff atomic.Bool
	inflight     atomic.Int64 // LIST and WATCH calls not yet returned
	closeOnce    sync.Once

	mu    sync.Mutex
	cache *cache // the running watch cache; nil without one
	held  bool   // HoldCache: the cache's feed holds etcd's events back
	name  string // Options.Name, or SetName's
	// delegators are the addresses of every cache delegator the server has
	// had, as goroutine stacks print them: a request can still wait in a
	// cache that a restart stopped (Stalled).
	delegators []string
	clocks     []*cacherClock // every cache's, for Close (cacherClock.After)
	watches    map[*Watch]struct{}
}

// etcd3Compactor is what etcd3.NewCompactor returns: kube-apiserver
// compacts etcd on a timer; here never (interval 0), but its storage
// reads the compacted revision from it.
type etcd3Compactor = interface {
	etcd3.Compactor
	Stop()
}

// cache is one life of kube-apiserver's watch cache: from its start (or a
// kube-apiserver restart) to the next.
type cache struct {
	store      storage.Interface // its etcd3 store, deadlines stripped
	closeStore func()
	feed       *feed // what the cacher gets from etcd
	cacher     *cacher.Cacher
	delegator  *cacher.CacheDelegator
	clock      *cacherClock // the cacher's, which keeps its timers (NextWork)
	created    time.Time    // when the cacher was made, on the server's clock
}

func (c *cache) stop() {
	c.feed.close() // first: the cacher's reflector may wait in a held feed
	c.drain()
	c.delegator.Stop()
	c.cacher.Stop()
	c.closeStore()
	dispatchers.Delete(dispatcherFrame(c.cacher))
}

// New builds the storage for res over client. With the cache, it returns
// once the cache has listed etcd and is ready to serve (Ready), unless
// the context ends first.
func New(ctx context.Context, client *clientv3.Client, res listwatch.Resource, opts Options) (*Server, error) {
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.HistoryWindow == 0 {
		opts.HistoryWindow = DefaultHistoryWindow
	}
	if err := disableWallClockChecks(); err != nil {
		return nil, err
	}
	s := &Server{res: res, opts: opts, client: client, watches: map[*Watch]struct{}{}, name: opts.Name}
	s.compactor = etcd3.NewCompactor(client, 0, opts.Clock, nil)
	if !opts.Cache {
		store, err := s.newStore()
		if err != nil {
			s.compactor.Stop()
			return nil, err
		}
		s.etcd, s.closeEtcd = noDeadlines{store}, store.Close
		return s, nil
	}
	if _, err := s.startCache(); err != nil {
		s.compactor.Stop()
		return nil, err
	}
	if err := s.WaitReady(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// WaitReady waits until the watch cache has listed etcd and is ready to
// serve, kube-apiserver knows whether etcd supports progress requests,
// and the cacher's dispatcher runs (a restarted cache held from starting
// is not ready until ReleaseCache). It returns at once without the cache.
func (s *Server) WaitReady(ctx context.Context) error {
	c := s.current()
	if c == nil {
		return nil
	}
	if err := c.cacher.Wait(ctx); err != nil {
		return fmt.Errorf("kube-apiserver's watch cache for %s did not become ready: %w", s.res.Resource, err)
	}
	if err := progressSupported(ctx); err != nil {
		return err
	}
	return dispatcherStarted(ctx, c.cacher)
}

// dispatcherStarted waits until the cacher's dispatcher has begun its
// loop. Ready as it is, the cacher hands nothing on until then: its
// dispatcher polls for the cache's first LIST every 10 ms of real time,
// so a clock moved in the meantime would reach its bookmark timer some
// time later, on the wall clock's say.
func dispatcherStarted(ctx context.Context, c *cacher.Cacher) error {
	for !dispatching(c) {
		select {
		case <-ctx.Done():
			return fmt.Errorf("kube-apiserver's watch cache did not begin dispatching events: %w", ctx.Err())
		case <-time.After(time.Millisecond):
		}
	}
	return nil
}

// progressSupported waits until k8s.io/apiserver knows that etcd supports
// progress requests. The etcd3 store asks each etcd endpoint for its
// version on a goroutine of its own (etcdfeature.DefaultFeatureSupportChecker,
// process-wide); until one answers, the cacher refuses a watch-list and
// serves no consistent read from the cache, as a kube-apiserver does for
// a moment after it starts. The server is ready once it knows.
func progressSupported(ctx context.Context) error {
	for !etcdfeature.DefaultFeatureSupportChecker.Supports(storage.RequestWatchProgress) {
		select {
		case <-ctx.Done():
			return fmt.Errorf("kube-apiserver did not learn whether etcd supports progress requests: %w", ctx.Err())
		case <-time.After(time.Millisecond):
		}
	}
	return nil
}

// startCache starts a watch cache over a store of its own, as a
// kube-apiserver starting up does, and makes it the one requests go to.
func (s *Server) startCache() (*cache, error) {
	store, err := s.newStore()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	held := s.held
	s.mu.Unlock()
	f := newFeed(noDeadlines{store}, s.opts.Clock, held, func() bool { return s.inflight.Load() > 0 }, s.Quiescent)
	clk := &cacherClock{WithTicker: s.opts.Clock}
	created := s.opts.Clock.Now() // the cacher counts its bookmark buckets from here
	c, err := cacher.NewCacherFromConfig(cacher.Config{
		Storage:             f,
		Versioner:           storage.APIObjectVersioner{},
		GroupResource:       s.res.GroupResource(),
		EventsHistoryWindow: s.opts.HistoryWindow,
		ResourcePrefix:      s.resourcePrefix(),
		KeyFunc:             s.keyOf,
		GetAttrsFunc:        getAttrs,
		NewFunc:             s.newObject,
		NewListFunc:         s.newList,
		Codec:               unstructured.UnstructuredJSONScheme,
		Clock:               clk,
	})
	if err != nil {
		store.Close()
		return nil, fmt.Errorf("kube-apiserver's watch cache for %s: %w", s.res.Resource, err)
	}
	cc := &cache{store: noDeadlines{store}, closeStore: store.Close, feed: f, cacher: c, clock: clk, created: created,
		delegator: cacher.NewCacheDelegator(c, servedByEtcd{noDeadlines{store}})}
	if err := widenDispatchBudget(c); err != nil {
		cc.stop()
		return nil, err
	}
	s.mu.Lock()
	s.cache = cc
	s.delegators = append(s.delegators, fmt.Sprintf("(%p", cc.delegator))
	s.clocks = append(s.clocks, clk)
	s.mu.Unlock()
	dispatchers.Store(dispatcherFrame(c), c)
	return cc, nil
}

// SetName names the server in the Sources of later requests (Options.Name).
func (s *Server) SetName(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.name = name
}

// Name is the server's name ("" if it has none).
func (s *Server) Name() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.name
}

// RestartCache plays a kube-apiserver restart: its watch cache stops,
// ending every watch it serves, and a new one starts and lists etcd. Until
// that list is done (HoldCache keeps it from starting) the new cache is
// not ready: a WATCH gets 429, and a LIST that may be answered from etcd
// is (C5). It returns as the list starts: WaitReady waits for it.
func (s *Server) RestartCache() error {
	old := s.current()
	if old == nil {
		return fmt.Errorf("there is no watch cache to restart")
	}
	if _, err := s.startCache(); err != nil {
		return err
	}
	old.stop()
	return nil
}

// RestartCacheReady is RestartCache, but the old cache goes (and its
// watches end) only once the new one is ready: a client whose watch ends
// comes back to a cache that serves it, never to a 429. It is a restart
// whose clients were slower than its list of etcd, as most are; a world
// that must play the same way every time restarts this way, not racing
// its clients against the list.
func (s *Server) RestartCacheReady(ctx context.Context) error {
	old := s.current()
	if old == nil {
		return fmt.Errorf("there is no watch cache to restart")
	}
	if _, err := s.startCache(); err != nil {
		return err
	}
	err := s.WaitReady(ctx)
	old.stop()
	return err
}

// current is the running watch cache, or nil.
func (s *Server) current() *cache {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cache
}

// api is what a request goes to: the cache delegator, or the etcd3 store
// without a cache.
func (s *Server) api() storage.Interface {
	if c := s.current(); c != nil {
		return c.delegator
	}
	return s.etcd
}

// Close stops the cache and every watch it serves. Closing again does
// nothing.
func (s *Server) Close() { s.closeOnce.Do(s.close) }

func (s *Server) close() {
	if c := s.current(); c != nil {
		c.stop()
	}
	if s.closeEtcd != nil {
		s.closeEtcd()
	}
	s.compactor.Stop()
	s.mu.Lock()
	clocks := s.clocks
	s.mu.Unlock()
	for _, clk := range clocks {
		clk.release()
	}
}

// Cached reports whether the watch cache serves requests.
func (s *Server) Cached() bool { return s.opts.Cache }

// Ready reports whether the watch cache is ready to serve (always true
// without it). An unready cache answers a WATCH with 429.
func (s *Server) Ready() bool {
	c := s.current()
	return c == nil || c.cacher.Ready()
}

// resourcePrefix is where res's objects live under /registry, as the
// cacher and etcd3 want it ("/pods/": the cacher's key functions need the
// trailing slash).
func (s *Server) resourcePrefix() string { return s.ResourcePrefix() + "/" }

func (s *Server) newObject() runtime.Object {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(s.res.GroupVersionKind())
	return u
}

func (s *Server) newList() runtime.Object {
	l := &unstructured.UnstructuredList{}
	gvk := s.res.GroupVersionKind()
	l.SetAPIVersion(gvk.GroupVersion().String())
	l.SetKind(gvk.Kind + "List")
	return l
}

// keyOf is an object's key below /registry.
func (s *Server) keyOf(obj runtime.Object) (string, error) {
	if s.res.Namespaced {
		return storage.NamespaceKeyFunc(s.resourcePrefix(), obj)
	}
	return storage.NoNamespaceKeyFunc(s.resourcePrefix(), obj)
}

// objectKey is the key of one object, if the registry can make one
// (registry/generic/registry NamespaceKeyFunc, NoNamespaceKeyFunc): a
// namespaced resource needs a namespace, and the name must be a path
// segment (not empty, "." or "..", without "/" or "%").
func (s *Server) objectKey(namespace, name string) (string, bool) {
	if (s.res.Namespaced && namespace == "") || name == "" || len(content.IsPathSegmentName(name)) > 0 {
		return "", false
	}
	if s.res.Namespaced {
		return s.resourcePrefix() + namespace + "/" + name, true
	}
	return s.resourcePrefix() + name, true
}

// keyRoot is where a request's objects live: the resource's prefix, or
// one namespace's.
func (s *Server) keyRoot(namespace string) string {
	if s.res.Namespaced && namespace != "" {
		return s.resourcePrefix() + namespace
	}
	return strings.TrimSuffix(s.resourcePrefix(), "/")
}

// getAttrs is what selectors match: labels, and the object-meta fields
// every resource has (metadata.name, metadata.namespace), as for a
// custom resource.
func getAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, nil, err
	}
	f := fields.Set{"metadata.name": m.GetName()}
	if m.GetNamespace() != "" {
		f["metadata.namespace"] = m.GetNamespace()
	}
	return labels.Set(m.GetLabels()), f, nil
}

// RequestProgress asks etcd for progress on the server's own watches, as
// the etcd3 store does (RequestWatchProgress): on the gRPC stream its
// watches share, which etcd's client keys by the context's metadata (the
// store opens every watch WithRequireLeader, so a request made on a plain
// context would go to a stream with no watches and nobody would hear it).
// Without the cache each watch, whether or not it allowed bookmarks, then
// gets a BOOKMARK. In front of the cache only the cacher's own watch of
// etcd hears it: the cacher does not pass etcd's bookmarks on to its
// watchers; it sends its own, on its clock (C3).
func (s *Server) RequestProgress(ctx context.Context) error {
	if c := s.current(); c != nil {
		return c.store.RequestWatchProgress(ctx)
	}
	return s.etcd.RequestWatchProgress(ctx)
}

// SetWatchListFeature plays kube-apiserver's WatchList feature gate: off,
// a WATCH that asks for initial events is refused with 422.
func (s *Server) SetWatchListFeature(on bool) { s.watchListOff.Store(!on) }

// WatchListFeature reports whether the WatchList feature is on.
func (s *Server) WatchListFeature() bool { return !s.watchListOff.Load() }
