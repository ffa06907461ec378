package apistorage

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/kubernetes"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/cacher"
	"k8s.io/apiserver/pkg/storage/etcd3"
	"k8s.io/apiserver/pkg/storage/value/encrypt/identity"
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

	etcd      storage.Interface // the etcd3 store, deadlines stripped
	closeEtcd func()            // stops the etcd3 store's own goroutines
	compactor interface{ Stop() }
	cacher    *cacher.Cacher         // nil without the cache
	delegator *cacher.CacheDelegator // nil without the cache
	feed      *feed                  // what the cacher gets from etcd; nil without the cache
	api       storage.Interface

	watchListOff atomic.Bool

	mu      sync.Mutex
	watches map[*Watch]struct{}
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
	s := &Server{res: res, opts: opts, client: client, watches: map[*Watch]struct{}{}}
	kc := &kubernetes.Client{Client: client}
	kc.Kubernetes = kc
	compactor := etcd3.NewCompactor(client, 0, opts.Clock, nil)
	versioner := storage.APIObjectVersioner{}
	codec := unstructured.UnstructuredJSONScheme
	store, err := etcd3.New(kc, compactor, codec, s.newObject, s.newList, "/registry", s.resourcePrefix(), res.GroupResource(),
		identity.NewEncryptCheckTransformer(), etcd3.NewDefaultLeaseManagerConfig(), etcd3.NewDefaultDecoder(codec, versioner), versioner)
	if err != nil {
		compactor.Stop()
		return nil, fmt.Errorf("kube-apiserver's etcd3 storage for %s: %w", res.Resource, err)
	}
	s.compactor, s.closeEtcd = compactor, store.Close
	s.etcd = noDeadlines{store}
	s.api = s.etcd
	if !opts.Cache {
		return s, nil
	}
	s.feed = newFeed(s.etcd)
	c, err := cacher.NewCacherFromConfig(cacher.Config{
		Storage:             s.feed,
		Versioner:           versioner,
		GroupResource:       res.GroupResource(),
		EventsHistoryWindow: opts.HistoryWindow,
		ResourcePrefix:      s.resourcePrefix(),
		KeyFunc:             s.keyOf,
		GetAttrsFunc:        getAttrs,
		NewFunc:             s.newObject,
		NewListFunc:         s.newList,
		Codec:               codec,
		Clock:               opts.Clock,
	})
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("kube-apiserver's watch cache for %s: %w", res.Resource, err)
	}
	s.cacher = c
	s.delegator = cacher.NewCacheDelegator(c, servedByEtcd{s.etcd})
	s.api = s.delegator
	if err := c.Wait(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("kube-apiserver's watch cache for %s did not become ready: %w", res.Resource, err)
	}
	return s, nil
}

// Close stops the cache and every watch it serves.
func (s *Server) Close() {
	if s.delegator != nil {
		s.delegator.Stop()
	}
	if s.cacher != nil {
		s.cacher.Stop()
	}
	if s.feed != nil {
		s.feed.close()
	}
	s.closeEtcd()
	s.compactor.Stop()
}

// Cached reports whether the watch cache serves requests.
func (s *Server) Cached() bool { return s.cacher != nil }

// Ready reports whether the watch cache is ready to serve (always true
// without it). An unready cache answers a WATCH with 429.
func (s *Server) Ready() bool { return s.cacher == nil || s.cacher.Ready() }

// resourcePrefix is where res's objects live under /registry, as the
// cacher and etcd3 want it ("/pods/": the cacher's key functions need the
// trailing slash).
func (s *Server) resourcePrefix() string { return "/" + s.res.Resource + "/" }

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

// RequestProgress asks etcd for progress on the server's own watches.
// Without the cache it asks as the etcd3 store does
// (RequestWatchProgress): on the gRPC stream its watches share, which
// etcd's client keys by the context's metadata (the store opens every
// watch WithRequireLeader, so a request made on a plain context would
// go to a stream with no watches and nobody would hear it); each watch,
// whether or not it allowed bookmarks, then gets a BOOKMARK.
// In front of the cache it is still asked on the plain stream, which
// carries none of the cacher's watches: the cacher does not pass etcd's
// bookmarks on to its watchers anyway; it sends its own, on its clock.
func (s *Server) RequestProgress(ctx context.Context) error {
	if s.cacher == nil {
		return s.etcd.RequestWatchProgress(ctx)
	}
	return s.client.RequestProgress(ctx)
}

// SetWatchListFeature plays kube-apiserver's WatchList feature gate: off,
// a WATCH that asks for initial events is refused with 422.
func (s *Server) SetWatchListFeature(on bool) { s.watchListOff.Store(!on) }

// WatchListFeature reports whether the WatchList feature is on.
func (s *Server) WatchListFeature() bool { return !s.watchListOff.Load() }
