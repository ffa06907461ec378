package kubeapiserver

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	"k8s.io/apimachinery/pkg/apis/meta/internalversion/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/endpoints/discovery"
	"k8s.io/apiserver/pkg/endpoints/handlers"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	"k8s.io/apiserver/pkg/endpoints/request"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/utils/clock"

	"github.com/cachelab/cachelab/internal/clockctx"
	"github.com/cachelab/cachelab/listwatch"
)

// minRequestTimeout is kube-apiserver's --min-request-timeout default: a
// watch that asks for no timeout gets one between this and twice it.
const minRequestTimeout = 1800 * time.Second

// install puts the resource's endpoints on the generic server, as
// apiextensions-apiserver puts a custom resource's there: on the mux
// behind the handler chain, each request routed by what the chain's
// request-info filter made of its path. LIST and WATCH (of all
// namespaces, of one, or of one object by name) and GET of one object go
// to k8s.io/apiserver's REST handlers over its generic registry; the
// discovery documents list the resource with those verbs.
func (s *Server) install(gs *genericapiserver.GenericAPIServer) error {
	res := s.storage.Resource()
	gv := schema.GroupVersion{Group: res.Group, Version: res.Version}
	store := s.registry(res)
	scope := &handlers.RequestScope{
		Namer:            handlers.ContextBasedNaming{Namer: meta.NewAccessor(), ClusterScoped: !res.Namespaced},
		Serializer:       negotiated{},
		ParameterCodec:   parameterCodec,
		Creater:          creater{},
		Convertor:        converter{},
		Typer:            typer{},
		UnsafeConvertor:  converter{},
		TableConvertor:   store,
		Resource:         gv.WithResource(res.Resource),
		Kind:             res.GroupVersionKind(),
		HubGroupVersion:  gv,
		MetaGroupVersion: metav1.SchemeGroupVersion,
	}
	list := handlers.ListResource(store, clockWatcher{store, s.clock, s.storage.WatchListFeature, &s.watches}, scope, false, minRequestTimeout)
	watchOne := handlers.ListResource(store, clockWatcher{store, s.clock, s.storage.WatchListFeature, &s.watches}, scope, true, minRequestTimeout)
	get := handlers.GetResource(store, scope)
	resources := discovery.APIResourceListerFunc(func() []metav1.APIResource {
		return []metav1.APIResource{{
			Name: res.Resource, SingularName: strings.ToLower(res.Kind), Namespaced: res.Namespaced,
			Kind: res.Kind, Verbs: metav1.Verbs{"get", "list", "watch"},
		}}
	})
	prefix := "/api"
	if res.Group != "" {
		prefix = "/apis/" + res.Group
	}
	versionPath := prefix + "/" + res.Version
	version := discovery.NewAPIVersionHandler(codecs, gv, resources)
	mux := gs.Handler.NonGoRestfulMux
	if res.Group == "" {
		mux.Handle("/api", discovery.NewLegacyRootAPIHandler(discovery.DefaultAddresses{DefaultAddress: strings.TrimPrefix(s.url, "https://")}, codecs, "/api"))
	}
	mux.Handle(versionPath, version)
	mux.HandlePrefix(versionPath+"/", http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		info, ok := request.RequestInfoFrom(req.Context())
		switch {
		case !ok || !info.IsResourceRequest || info.Resource != res.Resource || info.Subresource != "":
			http.NotFound(w, req)
		case info.Verb == "list" || (info.Verb == "watch" && info.Name == ""):
			list(w, req)
		case info.Verb == "watch":
			watchOne(w, req)
		case info.Verb == "get":
			get(w, req)
		default: // the resource is served for reading
			err := apierrors.NewMethodNotSupported(res.GroupResource(), info.Verb)
			responsewriters.ErrorNegotiated(err, codecs, gv, w, req)
		}
	}))
	return nil
}

// registry is k8s.io/apiserver's generic registry store for the
// resource, over the apistorage server's storage (its watch cache, or
// etcd3): it picks a request's key range and builds its selection
// predicate, as for every resource kube-apiserver serves.
func (s *Server) registry(res listwatch.Resource) *genericregistry.Store {
	prefix := s.storage.ResourcePrefix()
	attrs := storage.DefaultClusterScopedAttr
	keyRoot := func(ctx context.Context) string { return prefix }
	key := func(ctx context.Context, name string) (string, error) {
		return genericregistry.NoNamespaceKeyFunc(ctx, prefix, name)
	}
	if res.Namespaced {
		attrs = storage.DefaultNamespaceScopedAttr
		keyRoot = func(ctx context.Context) string { return genericregistry.NamespaceKeyRootFunc(ctx, prefix) }
		key = func(ctx context.Context, name string) (string, error) {
			return genericregistry.NamespaceKeyFunc(ctx, prefix, name)
		}
	}
	gvk := res.GroupVersionKind()
	return &genericregistry.Store{
		NewFunc: func() runtime.Object {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(gvk)
			return u
		},
		NewListFunc: func() runtime.Object {
			l := &unstructured.UnstructuredList{}
			l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
			return l
		},
		DefaultQualifiedResource:  res.GroupResource(),
		SingularQualifiedResource: schema.GroupResource{Group: res.Group, Resource: strings.ToLower(res.Kind)},
		KeyRootFunc:               keyRoot,
		KeyFunc:                   key,
		PredicateFunc: func(l labels.Selector, f fields.Selector) storage.SelectionPredicate {
			return storage.SelectionPredicate{Label: l, Field: f, GetAttrs: attrs}
		},
		Storage:        genericregistry.DryRunnableStorage{Storage: s.storage.Storage(), Codec: unstructured.UnstructuredJSONScheme},
		TableConvertor: rest.NewDefaultTableConvertor(res.GroupResource()),
	}
}

// clockWatcher is the registry's Watch with the watch's deadline moved
// onto the server's clock. kube-apiserver's watch handler gives the
// registry a context that ends at the watch's timeoutSeconds of wall
// time; here it ends at that much of the server's clock (a scenario's),
// and says so to the storage (the watch cache sends a bookmark just
// before it). The client hanging up still ends it at once.
//
// The handler's own wall-clock timer is untouched: a watch that has been
// open for its timeout in wall time ends then too. Scenario runs take
// seconds of wall time and their informers ask for at least 5 minutes.
type clockWatcher struct {
	store     *genericregistry.Store
	clock     clock.Clock
	watchList func() bool // the WatchList feature is on
	watches   *watches
}

func (w clockWatcher) Watch(ctx context.Context, opts *metainternalversion.ListOptions) (watch.Interface, error) {
	if !w.watchList() {
		// The handler validated the options with the process's WatchList
		// gate, which is on; this server plays one with it off
		// (apistorage's SetWatchListFeature): the same check, gate off.
		if errs := validation.ValidateListOptions(opts, false); len(errs) > 0 {
			return nil, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "ListOptions"}, "", errs)
		}
	}
	var timeout time.Duration
	if opts.TimeoutSeconds != nil && *opts.TimeoutSeconds > 0 {
		timeout = time.Duration(*opts.TimeoutSeconds) * time.Second
	} else if d, ok := ctx.Deadline(); ok {
		timeout = time.Until(d) // the handler's pick in [min, 2·min) request timeout
	}
	at := w.clock.Now().Add(timeout)
	wctx, cancel := clockctx.WithTimeout(context.WithoutCancel(ctx), w.clock, timeout)
	stop := context.AfterFunc(ctx, func() {
		if errors.Is(ctx.Err(), context.Canceled) { // the client hung up, or the server is stopping
			cancel()
		}
	})
	end := func() { stop(); cancel() }
	inner, err := w.store.Watch(clockDeadline{Context: wctx, at: at}, opts)
	if err != nil {
		end()
		return nil, err
	}
	user := ""
	if u, ok := request.UserFrom(ctx); ok {
		user = u.GetName()
	}
	return w.watches.relay(user, inner, end), nil
}

// clockDeadline is a context whose deadline is on the server's clock.
type clockDeadline struct {
	context.Context
	at time.Time
}

func (c clockDeadline) Deadline() (time.Time, bool) { return c.at, true }
