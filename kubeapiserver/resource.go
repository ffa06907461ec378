package kubeapiserver

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	"k8s.io/apimachinery/pkg/apis/meta/internalversion/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/endpoints/discovery"
	"k8s.io/apiserver/pkg/endpoints/handlers"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	"k8s.io/apiserver/pkg/endpoints/request"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/mux"
	"k8s.io/utils/clock"

	"github.com/cachelab/cachelab/apistorage"
	"github.com/cachelab/cachelab/internal/clockctx"
	"github.com/cachelab/cachelab/listwatch"
)

// minRequestTimeout is kube-apiserver's --min-request-timeout default: a
// watch that asks for no timeout gets one between this and twice it.
const minRequestTimeout = 1800 * time.Second

// served is a resource the server serves: the storage its objects are in,
// and the verbs it takes besides get, list and watch (create, update,
// delete), which the server takes with Options.Writes.
type served struct {
	storage *apistorage.Server
	writes  []string
}

// verbs are the verbs the resource is served with, sorted as discovery
// lists them (kube-apiserver's installer sorts them too).
func (sv served) verbs() []string {
	v := append([]string{"get", "list", "watch"}, sv.writes...)
	slices.Sort(v)
	return v
}

// endpoints are one resource's REST handlers, by what routeOf names them.
type endpoints struct {
	res      listwatch.Resource
	verbs    []string
	handlers map[string]http.Handler
	status   map[string]http.Handler // the status subresource's, by verb, or nil
	codecs   serializer.CodecFactory // the server's, for its errors
}

// statusVerbs are the verbs of the status subresource served: get, and
// update with Options.Writes (kube-apiserver serves patch too).
func (ep *endpoints) statusVerbs() []string {
	return slices.Sorted(maps.Keys(ep.status))
}

// install puts the served resources' endpoints on the generic server, as
// apiextensions-apiserver puts a custom resource's there: on the mux
// behind the handler chain, each request routed by what the chain's
// request-info filter made of its path. Every request goes to one of
// k8s.io/apiserver's REST handlers over its generic registry; the
// discovery documents list each resource with the verbs it is served
// with. cfg is the generic server's configuration, whose authorizer and
// request body limit the handlers take, as kube-apiserver's installer
// takes its API group's.
func (s *Server) install(gs *genericapiserver.GenericAPIServer, cfg *genericapiserver.Config) error {
	var versions []schema.GroupVersion // in the order their first resource is served
	byVersion := map[schema.GroupVersion][]*endpoints{}
	for _, sv := range s.served {
		ep, err := s.endpoints(sv, cfg)
		if err != nil {
			return err
		}
		gv := schema.GroupVersion{Group: ep.res.Group, Version: ep.res.Version}
		if byVersion[gv] == nil {
			versions = append(versions, gv)
		}
		byVersion[gv] = append(byVersion[gv], ep)
	}
	for _, gv := range versions {
		s.installVersion(gs.Handler.NonGoRestfulMux, gv, byVersion[gv])
	}
	return nil
}

// installVersion serves one group version: its discovery document, and
// its resources' requests, each to its resource's handler for it.
func (s *Server) installVersion(paths *mux.PathRecorderMux, gv schema.GroupVersion, eps []*endpoints) {
	prefix := "/api"
	if gv.Group != "" {
		prefix = "/apis/" + gv.Group
	}
	versionPath := prefix + "/" + gv.Version
	resources := discovery.APIResourceListerFunc(func() []metav1.APIResource {
		var out []metav1.APIResource
		for _, ep := range eps {
			out = append(out, metav1.APIResource{
				Name: ep.res.Resource, SingularName: strings.ToLower(ep.res.Kind), Namespaced: ep.res.Namespaced,
				Kind: ep.res.Kind, Verbs: ep.verbs,
			})
			if ep.status != nil { // listed as kube-apiserver lists a subresource
				out = append(out, metav1.APIResource{
					Name: ep.res.Resource + "/status", Namespaced: ep.res.Namespaced, Kind: ep.res.Kind, Verbs: ep.statusVerbs(),
				})
			}
		}
		return out
	})
	if gv.Group == "" { // the core group has one version
		paths.Handle("/api", discovery.NewLegacyRootAPIHandler(discovery.DefaultAddresses{DefaultAddress: strings.TrimPrefix(s.url, "https://")}, s.kinds.codecs, "/api"))
	}
	paths.Handle(versionPath, discovery.NewAPIVersionHandler(s.kinds.codecs, gv, resources))
	paths.HandlePrefix(versionPath+"/", http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		info, ok := request.RequestInfoFrom(req.Context())
		i := -1
		if ok && info.IsResourceRequest && (info.Subresource == "" || info.Subresource == "status") {
			i = slices.IndexFunc(eps, func(ep *endpoints) bool { return ep.res.Resource == info.Resource })
		}
		if i >= 0 && info.Subresource == "status" && (eps[i].status == nil || info.Name == "") {
			i = -1 // no status subresource, or not of an object
		}
		if i < 0 {
			http.NotFound(w, req)
			return
		}
		eps[i].serve(w, req, info)
	}))
}

// serve sends the request to the resource's handler for it, or answers
// 405 MethodNotSupported for a verb the resource is not served with.
func (ep *endpoints) serve(w http.ResponseWriter, req *http.Request, info *request.RequestInfo) {
	h, ok := ep.handlers[routeOf(ep.res, info)]
	if info.Subresource == "status" {
		h, ok = ep.status[routeOf(ep.res, info)]
	}
	if ok {
		h.ServeHTTP(w, req)
		return
	}
	err := apierrors.NewMethodNotSupported(ep.res.GroupResource(), info.Verb)
	responsewriters.ErrorNegotiated(err, ep.codecs, schema.GroupVersion{Group: ep.res.Group, Version: ep.res.Version}, w, req)
}

// routeOf names the handler a request goes to: its verb, except that a
// LIST and a WATCH of a collection (of all namespaces, or of one) go to
// "list", where ListResource tells them apart by the query, and a WATCH
// of one object by name to "watchOne". A write of a namespaced resource
// must name its namespace: kube-apiserver serves POST, PUT and DELETE
// only below /namespaces/<ns>/.
func routeOf(res listwatch.Resource, info *request.RequestInfo) string {
	switch {
	case info.Verb == "list" || (info.Verb == "watch" && info.Name == ""):
		return "list"
	case info.Verb == "watch":
		return "watchOne"
	case res.Namespaced && info.Namespace == "" && slices.Contains(writeVerbs, info.Verb):
		return "" // no such route
	}
	return info.Verb
}

// writeVerbs are the verbs Options.Writes serves.
var writeVerbs = []string{"create", "update", "delete"}

// endpoints builds a resource's REST handlers: k8s.io/apiserver's, over
// one generic registry store, with the request scope kube-apiserver's
// installer would give them.
func (s *Server) endpoints(sv served, cfg *genericapiserver.Config) (*endpoints, error) {
	res := sv.storage.Resource()
	store := s.registry(sv.storage)
	scope, err := s.scope(res, store, "", cfg)
	if err != nil {
		return nil, err
	}
	watcher := clockWatcher{store, s.clock, sv.storage.WatchListFeature, &s.watches}
	h := map[string]http.Handler{
		"list":     handlers.ListResource(store, watcher, scope, false, minRequestTimeout),
		"watchOne": handlers.ListResource(store, watcher, scope, true, minRequestTimeout),
		"get":      handlers.GetResource(store, scope),
	}
	for _, verb := range sv.writes {
		switch verb {
		case "create":
			h[verb] = perRequest(func() http.Handler { return handlers.CreateResource(store, scope, s.admit) })
		case "update":
			h[verb] = perRequest(func() http.Handler { return handlers.UpdateResource(store, scope, s.admit) })
		case "delete":
			// The store is a graceful deleter: it takes DeleteOptions.
			h[verb] = perRequest(func() http.Handler { return handlers.DeleteResource(store, true, scope, s.admit) })
		}
	}
	ep := &endpoints{res: res, verbs: sv.verbs(), handlers: h, codecs: s.kinds.codecs}
	if admit, ok := s.status[res.GroupResource()]; ok {
		if ep.status, err = s.statusEndpoints(res, store, admit, sv.writes, cfg); err != nil {
			return nil, err
		}
	}
	return ep, nil
}

// statusEndpoints are the handlers of a resource's status subresource,
// as apiextensions-apiserver makes a custom resource's (its etcd.go): a
// copy of the resource's registry store whose update strategy admits
// with the status's Admit, and a request scope naming the subresource,
// with a field manager of its own that tracks the status's fields.
func (s *Server) statusEndpoints(res listwatch.Resource, store *genericregistry.Store, admit Admit, writes []string, cfg *genericapiserver.Config) (map[string]http.Handler, error) {
	statusStore := *store
	st := store.UpdateStrategy.(strategy)
	st.admit = admit
	statusStore.UpdateStrategy = st
	scope, err := s.scope(res, &statusStore, "status", cfg)
	if err != nil {
		return nil, err
	}
	h := map[string]http.Handler{"get": handlers.GetResource(&statusStore, scope)}
	if slices.Contains(writes, "update") {
		h["update"] = perRequest(func() http.Handler { return handlers.UpdateResource(&statusStore, scope, s.admit) })
	}
	return h, nil
}

// perRequest is a write handler made anew for each request, as
// kube-apiserver's installer makes them (installer.go restfulCreateResource
// and its siblings call handlers.CreateResource inside the route
// function). k8s.io/apiserver's write handlers wrap the admission chain
// they were given on every request and store it back in the variable
// their closure holds ("admit = admission.WithAudit(admit)", create.go,
// update.go, delete.go): made once, as here before, every write wrapped
// the chain once more, so that the thousandth create went through a
// thousand audit wrappers, and two writes at once raced on the variable
// (-race saw it when the tests' runs shared one server in the cluster
// world).
type perRequest func() http.Handler

func (f perRequest) ServeHTTP(w http.ResponseWriter, req *http.Request) { f().ServeHTTP(w, req) }

// scope is what the REST handlers know of the resource (or of its
// subresource, "" for the object itself): how a request
// names its objects, how they are encoded and decoded, and, for writes,
// the field manager that keeps metadata.managedFields (every
// kube-apiserver keeps them: one is made for every resource it serves;
// this one, as for a custom resource without a schema, deduces the
// fields' types from the objects).
func (s *Server) scope(res listwatch.Resource, store *genericregistry.Store, subresource string, cfg *genericapiserver.Config) (*handlers.RequestScope, error) {
	gv := schema.GroupVersion{Group: res.Group, Version: res.Version}
	sc := s.kinds.scheme
	fm, err := managedfields.NewDefaultCRDFieldManager(managedfields.NewDeducedTypeConverter(),
		converter{sc}, sc, creater{sc}, res.GroupVersionKind(), gv, subresource, nil)
	if err != nil {
		return nil, fmt.Errorf("kubeapiserver: the field manager for %s: %w", strings.TrimSuffix(res.Resource+"/"+subresource, "/"), err)
	}
	return &handlers.RequestScope{
		Namer:               handlers.ContextBasedNaming{Namer: meta.NewAccessor(), ClusterScoped: !res.Namespaced},
		Serializer:          negotiated{sc},
		ParameterCodec:      s.kinds.params,
		Creater:             creater{sc},
		Convertor:           converter{sc},
		Defaulter:           sc,
		Typer:               typer{sc},
		UnsafeConvertor:     converter{sc},
		Authorizer:          cfg.Authorization.Authorizer,
		TableConvertor:      store,
		FieldManager:        fm,
		Resource:            gv.WithResource(res.Resource),
		Kind:                res.GroupVersionKind(),
		Subresource:         subresource,
		HubGroupVersion:     gv,
		MetaGroupVersion:    metav1.SchemeGroupVersion,
		MaxRequestBodyBytes: cfg.MaxRequestBodyBytes,
	}, nil
}

// clockWatcher is the registry's Watch with the watch's deadline moved
// onto the server's clock. kube-apiserver's watch handler gives the
// registry a context that ends at the watch's timeoutSeconds of wall
// time; here it ends at that much of the server's clock (a scenario's),
// and says so to the storage (the watch cache sends a bookmark just
// before it). The client hanging up still ends it at once.
//
// The handler's own wall-clock timer never fires: scenarioTimeouts took
// the timeout off the request and gave the handler one a year long
// (walltime.go).
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
	timeout, ok := watchTimeout(ctx) // the request's, taken off the wall clock (walltime.go)
	if !ok {
		if opts.TimeoutSeconds != nil && *opts.TimeoutSeconds > 0 {
			timeout = time.Duration(*opts.TimeoutSeconds) * time.Second
		} else if d, ok := ctx.Deadline(); ok {
			timeout = time.Until(d) // the handler's pick in [min, 2·min) request timeout
		}
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
	// The gate (gate.go) breaks a tie between two watches by what they
	// watch, not by which opened first.
	what := w.store.DefaultQualifiedResource.String() + "/" + request.NamespaceValue(ctx)
	initial := opts.SendInitialEvents != nil && *opts.SendInitialEvents
	return w.watches.relay(user, what, initial, inner, end), nil
}

// clockDeadline is a context whose deadline is on the server's clock.
type clockDeadline struct {
	context.Context
	at time.Time
}

func (c clockDeadline) Deadline() (time.Time, bool) { return c.at, true }
