package apistorage

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/utils/clock"

	"github.com/cachelab/cachelab/listwatch"
)

// Storage is the server's storage as kube-apiserver's generic registry
// sees it (the storage.Interface behind a registry.Store): each call goes
// to what serves requests at that moment, the cache delegator of the
// running watch cache or, without a cache, the etcd3 store. A registry
// built over it keeps working across RestartCache.
//
// A LIST or WATCH made through it counts as in progress for Quiescent,
// as one made through ListerWatcher does, and a LIST notes where it was
// answered from in its context's Source (WithSource).
func (s *Server) Storage() storage.Interface { return routed{s} }

// routed forwards every call to Server.api at the time of the call.
type routed struct{ s *Server }

var _ storage.Interface = routed{}

func (r routed) Versioner() storage.Versioner { return r.s.api().Versioner() }

func (r routed) Create(ctx context.Context, key string, obj, out runtime.Object, ttl uint64) error {
	return r.s.api().Create(ctx, key, obj, out, ttl)
}

func (r routed) Delete(ctx context.Context, key string, out runtime.Object, pre *storage.Preconditions,
	validate storage.ValidateObjectFunc, cached runtime.Object, opts storage.DeleteOptions) error {
	return r.s.api().Delete(ctx, key, out, pre, validate, cached, opts)
}

func (r routed) Watch(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, error) {
	r.s.inflight.Add(1)
	defer r.s.inflight.Add(-1)
	return r.s.api().Watch(ctx, key, opts)
}

func (r routed) Get(ctx context.Context, key string, opts storage.GetOptions, out runtime.Object) error {
	return r.s.api().Get(ctx, key, opts, out)
}

func (r routed) GetList(ctx context.Context, key string, opts storage.ListOptions, out runtime.Object) error {
	if src := SourceOf(ctx); src != nil {
		src.Server, src.Etcd = r.s.Name(), !r.s.Cached()
	}
	r.s.inflight.Add(1)
	defer r.s.inflight.Add(-1)
	return r.s.api().GetList(ctx, key, opts, out)
}

func (r routed) GuaranteedUpdate(ctx context.Context, key string, dest runtime.Object, ignoreNotFound bool,
	pre *storage.Preconditions, try storage.UpdateFunc, cached runtime.Object) error {
	return r.s.api().GuaranteedUpdate(ctx, key, dest, ignoreNotFound, pre, try, cached)
}

func (r routed) Stats(ctx context.Context) (storage.Stats, error) { return r.s.api().Stats(ctx) }

func (r routed) ReadinessCheck() error { return r.s.api().ReadinessCheck() }

func (r routed) RequestWatchProgress(ctx context.Context) error { return r.s.RequestProgress(ctx) }

func (r routed) GetCurrentResourceVersion(ctx context.Context) (uint64, error) {
	return r.s.api().GetCurrentResourceVersion(ctx)
}

func (r routed) EnableResourceSizeEstimation(f storage.KeysFunc) error {
	return r.s.api().EnableResourceSizeEstimation(f)
}

func (r routed) CompactRevision() int64 { return r.s.api().CompactRevision() }

// ResourcePrefix is where the resource's objects live below /registry,
// as the registry's key functions want it ("/pods").
func (s *Server) ResourcePrefix() string { return "/" + s.res.StorePath() }

// Resource is the resource the server stores.
func (s *Server) Resource() listwatch.Resource { return s.res }

// Clock is the server's clock (Options.Clock).
func (s *Server) Clock() clock.WithTicker { return s.opts.Clock }
