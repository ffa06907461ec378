package apistorage

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cachelab/cachelab/apistorage/source"
	"github.com/cachelab/cachelab/internal/clockctx"
	"github.com/cachelab/cachelab/listwatch"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	"k8s.io/apimachinery/pkg/apis/meta/internalversion/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/storage"
	storeerr "k8s.io/apiserver/pkg/storage/errors"
)

// minRequestTimeout is kube-apiserver's --min-request-timeout default: a
// watch that asks for no timeout gets one between this and twice it.
const minRequestTimeout = 1800 * time.Second

// ListerWatcher is a client's view of the Server: LIST and WATCH on the
// resource, in all namespaces or one, handled as kube-apiserver's REST
// handler and generic registry handle them before they reach storage. It
// has the method sets of client-go's cache.ListerWatcher and
// cache.ListerWatcherWithContext.
type ListerWatcher struct {
	srv       *Server
	namespace string
}

// ListerWatcher returns the ListerWatcher for one namespace ("" for all).
func (s *Server) ListerWatcher(namespace string) *ListerWatcher {
	return &ListerWatcher{srv: s, namespace: namespace}
}

// WithNamespace returns the ListerWatcher for another namespace of the
// same server.
func (lw *ListerWatcher) WithNamespace(ns string) *ListerWatcher { return lw.srv.ListerWatcher(ns) }

// Server is the server the ListerWatcher's requests go to.
func (lw *ListerWatcher) Server() *Server { return lw.srv }

// IsWatchListSemanticsUnSupported is false: kube-apiserver supports
// watch-list (unless SetWatchListFeature turned it off, which clients
// find out by asking).
func (lw *ListerWatcher) IsWatchListSemanticsUnSupported() bool { return false }

// List is ListWithContext without a context.
func (lw *ListerWatcher) List(opts metav1.ListOptions) (runtime.Object, error) {
	return lw.ListWithContext(context.Background(), opts)
}

// Watch is WatchWithContext without a context.
func (lw *ListerWatcher) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return lw.WatchWithContext(context.Background(), opts)
}

// options turns a request's options into kube-apiserver's internal ones,
// defaulted and validated as its handler does (a failure is 422 on
// ListOptions), and builds the selection predicate the registry gives
// storage.
func (lw *ListerWatcher) options(opts metav1.ListOptions, isWatch bool) (metainternalversion.ListOptions, storage.SelectionPredicate, error) {
	var in metainternalversion.ListOptions
	opts.Watch = isWatch
	if err := metainternalversion.Convert_v1_ListOptions_To_internalversion_ListOptions(&opts, &in, nil); err != nil {
		return in, storage.SelectionPredicate{}, apierrors.NewBadRequest(err.Error())
	}
	watchList := lw.srv.WatchListFeature()
	metainternalversion.SetListOptionsDefaults(&in, watchList)
	if errs := validation.ValidateListOptions(&in, watchList); len(errs) > 0 {
		return in, storage.SelectionPredicate{}, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "ListOptions"}, "", errs)
	}
	label, field := labels.Everything(), fields.Everything()
	if in.LabelSelector != nil {
		label = in.LabelSelector
	}
	if in.FieldSelector != nil {
		f, err := in.FieldSelector.Transform(runtime.DefaultMetaV1FieldSelectorConversion)
		if err != nil {
			return in, storage.SelectionPredicate{}, apierrors.NewBadRequest(err.Error())
		}
		field = f
	}
	return in, storage.SelectionPredicate{Label: label, Field: field, GetAttrs: getAttrs}, nil
}

// scope is the request's context and storage key, worked out as the
// generic registry does it before storage (registry/generic/registry
// store.go ListPredicate, WatchPredicate), for a LIST and a WATCH alike:
//
//   - a request for all namespaces whose field selector requires one
//     (metadata.namespace=ns) is narrowed to it, if it is a valid
//     namespace name;
//   - one whose field selector requires a name (metadata.name=x) reads
//     and watches that one key, not recursively, if there is a key for
//     it: a namespace (for a namespaced resource) and a name that can be
//     a path segment (NamespaceKeyFunc, NoNamespaceKeyFunc);
//   - with a continue token, neither (SelectionPredicate.MatchesSingle*).
//
// Otherwise the predicate alone filters what the wider range holds.
func (lw *ListerWatcher) scope(ctx context.Context, p storage.SelectionPredicate) (context.Context, string, bool) {
	ns := lw.namespace
	if ns == "" {
		if sel, ok := p.MatchesSingleNamespace(); ok && len(apivalidation.ValidateNamespaceName(sel, false)) == 0 {
			ns = sel
		}
	}
	if ns != "" {
		ctx = request.WithNamespace(ctx, ns)
	}
	if name, ok := p.MatchesSingle(); ok {
		if key, ok := lw.srv.objectKey(ns, name); ok {
			return ctx, key, false
		}
	}
	return ctx, lw.srv.keyRoot(ns), true
}

// ListWithContext lists the resource. Where the answer came from (the
// cache or etcd) is noted in the context's Source (WithSource).
func (lw *ListerWatcher) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	obj, err := serve(ctx, lw.srv, func() (runtime.Object, error) { return lw.list(ctx, opts) }, nil)
	return obj, err
}

// serve runs a request the way kube-apiserver's handler does for a client
// that may hang up: the server goes on with it until storage returns, but
// a client whose context ends gets its context's error at once. (The
// watch cache waits for freshness without looking at the context, up to
// 3 s of its clock; a stopping informer must not wait for that.) What the
// server produces for a client that has gone is dropped (a watch is
// stopped).
func serve[T any](ctx context.Context, srv *Server, do func() (T, error), drop func(T)) (T, error) {
	type result struct {
		v   T
		err error
	}
	srv.inflight.Add(1)
	done := make(chan result) // unbuffered: an answer nobody takes is dropped
	gone := make(chan struct{})
	go func() {
		defer srv.inflight.Add(-1)
		v, err := do()
		select {
		case done <- result{v, err}:
		case <-gone:
			if err == nil && drop != nil {
				drop(v)
			}
		}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		close(gone)
		select {
		case r := <-done: // it had finished: the answer stands
			return r.v, r.err
		default:
		}
		var zero T
		return zero, ctx.Err()
	}
}

func (lw *ListerWatcher) list(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	in, p, err := lw.options(opts, false)
	if err != nil {
		return nil, err
	}
	if src := source.Of(ctx); src != nil {
		src.Server = lw.srv.Name()
		src.Etcd = !lw.srv.Cached()
	}
	p.Limit, p.Continue = in.Limit, in.Continue
	ctx, key, recursive := lw.scope(ctx, p)
	list := lw.srv.newList()
	err = lw.srv.api().GetList(ctx, key, storage.ListOptions{
		ResourceVersion:      in.ResourceVersion,
		ResourceVersionMatch: in.ResourceVersionMatch,
		Predicate:            p,
		Recursive:            recursive,
	}, list)
	if err != nil {
		return nil, storeerr.InterpretListError(err, lw.srv.res.GroupResource())
	}
	return wire(list), nil
}

// WatchWithContext watches the resource. The watch ends at its
// TimeoutSeconds on the server's clock (with none asked for, somewhere
// between kube-apiserver's minimum request timeout and twice it), and the
// cache sees that deadline, as it does in kube-apiserver.
func (lw *ListerWatcher) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return serve(ctx, lw.srv, func() (watch.Interface, error) { return lw.watch(ctx, opts) }, func(w watch.Interface) { w.Stop() })
}

func (lw *ListerWatcher) watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	in, p, err := lw.options(opts, true)
	if err != nil {
		return nil, err
	}
	p.AllowWatchBookmarks = in.AllowWatchBookmarks
	timeout := minRequestTimeout + time.Duration(rand.Float64()*float64(minRequestTimeout))
	if in.TimeoutSeconds != nil && *in.TimeoutSeconds > 0 {
		timeout = time.Duration(*in.TimeoutSeconds) * time.Second
	}
	wctx, cancel := lw.srv.deadline(ctx, timeout)
	wctx, key, recursive := lw.scope(wctx, p)
	w := &Watch{srv: lw.srv, pred: p, key: key, recursive: recursive, cancel: cancel,
		result: make(chan watch.Event), done: make(chan struct{})}
	inner, err := lw.srv.api().Watch(wctx, key, storage.ListOptions{
		ResourceVersion:   in.ResourceVersion,
		Predicate:         p,
		Recursive:         recursive,
		SendInitialEvents: in.SendInitialEvents,
	})
	if err != nil {
		cancel()
		return nil, storeerr.InterpretWatchError(err, lw.srv.res.GroupResource(), "")
	}
	w.inner = inner
	lw.srv.track(w, true)
	go w.relay(wctx)
	return w, nil
}

// Watch is a watch served by the Server.
type Watch struct {
	srv       *Server
	pred      storage.SelectionPredicate
	key       string
	recursive bool
	inner     watch.Interface
	cancel    context.CancelFunc
	result    chan watch.Event
	done      chan struct{}
	stopOnce  sync.Once

	handing atomic.Bool  // relay is handing an event to the client
	handed  atomic.Int64 // events the client has taken
}

// Handed is how many events the client has taken from the watch.
func (w *Watch) Handed() int64 { return w.handed.Load() }

func (w *Watch) ResultChan() <-chan watch.Event { return w.result }

// Stop ends the watch.
func (w *Watch) Stop() {
	w.stopOnce.Do(func() { close(w.done) })
	w.cancel()
}

func (w *Watch) relay(ctx context.Context) {
	defer close(w.result)
	defer w.srv.track(w, false)
	defer w.inner.Stop()
	in := w.inner.ResultChan()
	for {
		select {
		case e, ok := <-in:
			if !ok {
				return
			}
			e.Object = wire(e.Object)
			w.handing.Store(true)
			select {
			case w.result <- e:
			case <-w.done:
				w.handing.Store(false)
				return
			}
			w.handed.Add(1)
			w.handing.Store(false)
		case <-ctx.Done():
			return
		case <-w.done:
			return
		}
	}
}

// deadline is a watch's context: it ends after timeout on the server's
// clock, and says so (Deadline) to whoever reads it.
func (s *Server) deadline(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	at := s.opts.Clock.Now().Add(timeout)
	ctx, cancel := clockctx.WithTimeout(ctx, s.opts.Clock, timeout)
	return clockDeadline{Context: ctx, at: at}, cancel
}

// clockDeadline is a context whose deadline is on the server's clock.
type clockDeadline struct {
	context.Context
	at time.Time
}

func (c clockDeadline) Deadline() (time.Time, bool) { return c.at, true }

func (s *Server) track(w *Watch, open bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if open {
		s.watches[w] = struct{}{}
	} else {
		delete(s.watches, w)
	}
}

// ExpiredContinue is the 410 Expired a LIST page gets once etcd has
// compacted its list's revision between two pages, with the token to go
// on inconsistently. The etcd3 store builds it (interpretListError) only
// from a real compaction; listwatch's copy of it is the same error.
func (lw *ListerWatcher) ExpiredContinue(opts metav1.ListOptions) error {
	return listwatch.NewListerWatcher(lw.srv.client, lw.srv.res, listwatch.Options{Namespace: lw.namespace}).ExpiredContinue(opts)
}

// RequestProgress is the Server's.
func (lw *ListerWatcher) RequestProgress(ctx context.Context) error {
	return lw.srv.RequestProgress(ctx)
}

// SetWatchListFeature is the Server's.
func (lw *ListerWatcher) SetWatchListFeature(on bool) { lw.srv.SetWatchListFeature(on) }

// wire is the object as a client receives it: kube-apiserver sends a
// serialized copy, never the object the cache holds (which the cacher may
// have wrapped to serialize it once for many watchers).
func wire(obj runtime.Object) runtime.Object {
	if c, ok := obj.(runtime.CacheableObject); ok {
		obj = c.GetObject()
	}
	if obj == nil {
		return nil
	}
	return obj.DeepCopyObject()
}

// NotesSource is true: a LIST notes in its context's Source (WithSource)
// whether the cache or etcd answered it.
func (lw *ListerWatcher) NotesSource() bool { return true }
