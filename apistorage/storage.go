package apistorage

import (
	"context"
	"fmt"
	"time"

	"go.etcd.io/etcd/client/v3/kubernetes"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/features"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/etcd3"
	"k8s.io/apiserver/pkg/storage/value"
	"k8s.io/apiserver/pkg/storage/value/encrypt/identity"
	utilfeature "k8s.io/apiserver/pkg/util/feature"

	"github.com/cachelab/cachelab/apistorage/source"
)

// noDeadlines is the etcd3 store with every context's deadline hidden
// from it (cancellation still reaches it). A watch's deadline is on the
// server's clock, which the cacher reads (to send a bookmark just before
// it), but gRPC would read it against the wall clock: under a fake clock,
// whose time may be long past, every etcd call would fail at once.
type noDeadlines struct{ storage.Interface }

type withoutDeadline struct{ context.Context }

func (withoutDeadline) Deadline() (time.Time, bool) { return time.Time{}, false }

func plain(ctx context.Context) context.Context {
	if _, ok := ctx.Deadline(); ok {
		return withoutDeadline{ctx}
	}
	return ctx
}

func (s noDeadlines) Create(ctx context.Context, key string, obj, out runtime.Object, ttl uint64) error {
	return s.Interface.Create(plain(ctx), key, obj, out, ttl)
}

func (s noDeadlines) Delete(ctx context.Context, key string, out runtime.Object, preconditions *storage.Preconditions, validateDeletion storage.ValidateObjectFunc, cachedExistingObject runtime.Object, opts storage.DeleteOptions) error {
	return s.Interface.Delete(plain(ctx), key, out, preconditions, validateDeletion, cachedExistingObject, opts)
}

func (s noDeadlines) Watch(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, error) {
	return s.Interface.Watch(plain(ctx), key, opts)
}

func (s noDeadlines) Get(ctx context.Context, key string, opts storage.GetOptions, objPtr runtime.Object) error {
	return s.Interface.Get(plain(ctx), key, opts, objPtr)
}

func (s noDeadlines) GetList(ctx context.Context, key string, opts storage.ListOptions, listObj runtime.Object) error {
	return s.Interface.GetList(plain(ctx), key, opts, listObj)
}

func (s noDeadlines) GuaranteedUpdate(ctx context.Context, key string, destination runtime.Object, ignoreNotFound bool, preconditions *storage.Preconditions, tryUpdate storage.UpdateFunc, cachedExistingObject runtime.Object) error {
	return s.Interface.GuaranteedUpdate(plain(ctx), key, destination, ignoreNotFound, preconditions, tryUpdate, cachedExistingObject)
}

func (s noDeadlines) Stats(ctx context.Context) (storage.Stats, error) {
	return s.Interface.Stats(plain(ctx))
}

func (s noDeadlines) RequestWatchProgress(ctx context.Context) error {
	return s.Interface.RequestWatchProgress(plain(ctx))
}

func (s noDeadlines) GetCurrentResourceVersion(ctx context.Context) (uint64, error) {
	return s.Interface.GetCurrentResourceVersion(plain(ctx))
}

// Source is where a request's answer came from (package source).
type Source = source.Source

// WithSource returns a context that notes where a LIST's answer comes
// from; read it from the Source once the LIST has returned.
func WithSource(ctx context.Context) (context.Context, *Source) { return source.With(ctx) }

// SourceOf is the Source a context notes a LIST's answer in (WithSource),
// or nil: a server in front of this one (kube-apiserver over HTTP) fills
// in its client's from its own.
func SourceOf(ctx context.Context) *Source { return source.Of(ctx) }

// servedByEtcd is the store behind the cache delegator: whatever reaches
// it is served by etcd, and the request's Source says so.
type servedByEtcd struct{ storage.Interface }

func (s servedByEtcd) mark(ctx context.Context) {
	if src := source.Of(ctx); src != nil {
		src.Etcd = true
	}
}

func (s servedByEtcd) GetList(ctx context.Context, key string, opts storage.ListOptions, listObj runtime.Object) error {
	s.mark(ctx)
	return s.Interface.GetList(ctx, key, opts, listObj)
}

func (s servedByEtcd) Get(ctx context.Context, key string, opts storage.GetOptions, objPtr runtime.Object) error {
	s.mark(ctx)
	return s.Interface.Get(ctx, key, opts, objPtr)
}

// etcd3Store is what etcd3.New returns.
type etcd3Store = interface {
	storage.Interface
	Close()
}

// newStore is k8s.io/apiserver's etcd3 store for the resource, put
// together as kube-apiserver's storage factory does it
// (storagebackend/factory newETCD3Storage): with the
// AllowUnsafeMalformedObjectDeletion gate (beta, on by default in 1.37),
// a value that does not decode is a corrupt object, and a LIST that meets
// such values fails with one StorageReadError naming them all (E12).
func (s *Server) newStore() (etcd3Store, error) {
	kc := &kubernetes.Client{Client: s.client}
	kc.Kubernetes = kc
	versioner := storage.APIObjectVersioner{}
	codec := unstructured.UnstructuredJSONScheme
	var transformer value.Transformer = identity.NewEncryptCheckTransformer()
	decoder := etcd3.NewDefaultDecoder(codec, versioner)
	corrupt := utilfeature.DefaultFeatureGate.Enabled(features.AllowUnsafeMalformedObjectDeletion)
	if corrupt {
		transformer = etcd3.WithCorruptObjErrorHandlingTransformer(transformer)
		decoder = etcd3.WithCorruptObjErrorHandlingDecoder(decoder)
	}
	store, err := etcd3.New(kc, s.compactor, codec, s.newObject, s.newList, "/registry", s.resourcePrefix(), s.res.GroupResource(),
		transformer, etcd3.NewDefaultLeaseManagerConfig(), decoder, versioner)
	if err != nil {
		return nil, fmt.Errorf("kube-apiserver's etcd3 storage for %s: %w", s.res.Resource, err)
	}
	if !corrupt {
		return store, nil
	}
	return closable{etcd3.NewStoreWithUnsafeCorruptObjectDeletion(store, s.res.GroupResource()), store.Close}, nil
}

// closable is a store wrapped by another, with the inner one's Close.
type closable struct {
	storage.Interface
	close func()
}

func (c closable) Close() { c.close() }
