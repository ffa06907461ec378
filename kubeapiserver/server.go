package kubeapiserver

import (
	"context"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"runtime/pprof"
	"strconv"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/admission"
	x509request "k8s.io/apiserver/pkg/authentication/request/x509"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/apiserver/pkg/server/healthz"
	restclient "k8s.io/client-go/rest"
	basecompatibility "k8s.io/component-base/compatibility"
	"k8s.io/utils/clock"

	"github.com/cachelab/cachelab/apistorage"
)

// Options configures a Server.
type Options struct {
	// Clock ends each watch at its timeoutSeconds (kube-apiserver's
	// timer); the storage's clock if nil. A simulation gives its fake
	// clock.
	Clock clock.Clock
	// Writes makes the server take writes: the resource takes create
	// (POST to a namespace's collection), update (PUT of an object) and
	// delete (DELETE of an object), and namespaces, if served, create
	// and delete. Without it every resource is served for reading only,
	// and any other verb is 405 MethodNotSupported.
	Writes bool
	// Namespaces, if set, is the storage of the core group's namespaces
	// (cluster-scoped, kind Namespace), served at /api/v1/namespaces and
	// listed in discovery. A create in a namespace that does not exist is
	// then refused with 404, as kube-apiserver's NamespaceLifecycle
	// admission plugin refuses it (admission.go).
	//
	// A DELETE of a namespace removes it at once, and leaves whatever is
	// in it where it is: there is no namespace controller here. A real
	// cluster marks the namespace Terminating, refuses creates in it, and
	// deletes it once its namespace controller has deleted its contents.
	//
	// The storage is the caller's, to close after the server.
	Namespaces *apistorage.Server
	// Also are the storages of more resources the server serves beside
	// the first (New's st), each at its group's path (/api/v1 for the
	// core group, /apis/<group>/<version> for another) with the same
	// verbs, as a kube-apiserver serves every resource it has. The
	// storages are the caller's, to close after the server.
	Also []*apistorage.Server
	// Labels, if set, gives the pprof labels to put on the goroutine
	// that serves a request of user, once the server has counted the
	// request received (Pending) and before anything else touches it:
	// every goroutine the request starts inherits them. A simulation
	// uses them to tell which goroutines work for which client (and its
	// tests, to make a request late there).
	Labels func(user string) pprof.LabelSet
	// Admit, if set, is what the server does to the writes of a
	// resource served (by its group and resource) before it stores them,
	// in its strategy's Validate and ValidateUpdate: a custom resource's
	// pruning, defaulting and schema validation (package crd's
	// Definition.Admitted). Without it a write is stored as it came.
	Admit map[schema.GroupResource]Admit
	// Status, if set, gives a resource served (by its group and
	// resource) the status subresource, as a custom resource's
	// definition gives it: GET and PUT of <object>/status, listed in
	// discovery, the PUT's object admitted by the resource's Status
	// (package crd's Definition.AdmittedStatus: only its status is
	// kept). The resource's Admit then keeps an update from changing the
	// status. It takes Options.Writes for PUT.
	Status map[schema.GroupResource]Admit
	// Listener, if set, is where the server takes its connections, in
	// place of a port of its own on 127.0.0.1; its Addr is the URL's
	// host and port, and must be 127.0.0.1 or localhost, which the
	// serving certificate names. A world that must know what is on the
	// wire gives one in memory (internal/memnet), and Dial with it. The
	// server closes it.
	Listener net.Listener
	// GenerateName, if set, makes the name of an object created with
	// metadata.generateName from its prefix, in place of kube-apiserver's
	// five random characters: a world that must play the same way every
	// time gives one drawn from a seeded source.
	GenerateName func(base string) string
	// Gate, if set, holds the events of its users' watches until its
	// owner lets them go, one at a time (gate.go).
	Gate *Gate
	// Dial, with Listener, is how the server's own checks (readiness)
	// reach it.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
}

// Admit does to an object written (old nil for a create) what a
// resource's own strategy does before it is stored, in place, and
// returns what it refuses.
type Admit func(obj, old map[string]any) field.ErrorList

// Server is kube-apiserver over HTTPS on 127.0.0.1, serving a resource
// (and, with Options.Namespaces, namespaces) from apistorage servers.
type Server struct {
	served []served // the resources, in discovery's order
	admits map[schema.GroupResource]Admit
	status map[schema.GroupResource]Admit // Options.Status
	kinds  kinds                          // the scheme of their group versions
	admit  admission.Interface            // nil without Options.Namespaces
	clock  clock.Clock
	labels func(user string) pprof.LabelSet // Options.Labels
	dial   func(ctx context.Context, network, address string) (net.Conn, error)
	names  func(base string) string // Options.GenerateName
	pki    *pki
	url    string

	faults  faults
	log     requestLog
	watches watches
	stop    context.CancelFunc
	stopped chan struct{} // the generic API server has shut down
	once    sync.Once
}

// New starts kube-apiserver over st (and opts.Namespaces) on a port the
// kernel hands out, and returns once it answers /readyz.
func New(ctx context.Context, st *apistorage.Server, opts Options) (*Server, error) {
	if opts.Clock == nil {
		opts.Clock = st.Clock()
	}
	s := &Server{clock: opts.Clock, labels: opts.Labels, admits: opts.Admit, status: opts.Status, dial: opts.Dial, names: opts.GenerateName, stopped: make(chan struct{})}
	s.watches.gate = opts.Gate
	if err := s.serve(st, opts); err != nil {
		return nil, err
	}
	var gvs []schema.GroupVersion
	for _, sv := range s.served {
		gvs = append(gvs, sv.storage.Resource().GroupVersionKind().GroupVersion())
	}
	s.kinds = newKinds(gvs)
	s.faults.codecs = s.kinds.codecs
	p, err := newPKI(time.Now())
	if err != nil {
		return nil, err
	}
	ln := opts.Listener
	if ln != nil && opts.Dial == nil {
		return nil, fmt.Errorf("kubeapiserver: Options.Listener needs Options.Dial, for the server's own readiness checks")
	}
	if ln == nil {
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			return nil, fmt.Errorf("kubeapiserver: listening on loopback: %w", err)
		}
	}
	s.pki, s.url = p, "https://"+ln.Addr().String()
	gs, err := s.generic(ln)
	if err != nil {
		ln.Close()
		return nil, err
	}
	runCtx, stop := context.WithCancel(context.Background())
	s.stop = stop
	go func() {
		defer close(s.stopped)
		_ = gs.PrepareRun().RunWithContext(runCtx)
	}()
	if err := s.waitReady(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// generic builds k8s.io/apiserver's generic API server: its handler chain
// (panic recovery, request info, timeouts, authentication by client
// certificate, authorization, max-in-flight) in front of the resource's
// REST handlers and discovery. Inside the chain, where a request is
// known and its user authorized, come this package's filters: the
// faults a scenario placed, then protobuf bodies turned into JSON
// (protobuf.go), then watches' timeouts moved onto the server's clock.
func (s *Server) generic(ln net.Listener) (*genericapiserver.GenericAPIServer, error) {
	cfg := genericapiserver.NewConfig(s.kinds.codecs)
	cfg.EffectiveVersion = basecompatibility.NewEffectiveVersionFromString("1.37.2", "", "")
	cfg.LoopbackClientConfig = &restclient.Config{Host: s.url}
	cfg.EnableProfiling, cfg.EnableMetrics, cfg.EnableIndex = false, false, false
	cfg.RequestTimeout = wallNever // walltime.go
	// healthz.LogHealthz starts a goroutine that never ends, once per
	// process; ping is the check that stays.
	checks := []healthz.HealthChecker{healthz.PingHealthz}
	cfg.HealthzChecks, cfg.LivezChecks, cfg.ReadyzChecks = checks, checks, checks
	serving, err := dynamiccertificates.NewStaticCertKeyContent("serving", s.pki.servingPEM, s.pki.servingKey)
	if err != nil {
		return nil, err
	}
	ca, err := dynamiccertificates.NewStaticCAContent("client-ca", s.pki.caPEM)
	if err != nil {
		return nil, err
	}
	cfg.SecureServing = &genericapiserver.SecureServingInfo{Listener: ln, Cert: serving, ClientCA: ca}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.pki.caPEM)
	cfg.Authentication.Authenticator = x509request.New(x509.VerifyOptions{
		Roots:     pool,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, x509request.CommonNameUserConversion)
	cfg.Authorization.Authorizer = authorizerfactory.NewPrivilegedGroups(Group)
	cfg.BuildHandlerChainFunc = func(h http.Handler, c *genericapiserver.Config) http.Handler {
		inner := s.faults.wrap(s.protobufBodies(scenarioTimeouts(h, time.Duration(c.MinRequestTimeout)*time.Second), c.MaxRequestBodyBytes))
		return s.log.wrap(genericapiserver.DefaultBuildHandlerChain(inner, c), s.labels)
	}
	gs, err := cfg.Complete(nil).New("cachelab-kube-apiserver", genericapiserver.NewEmptyDelegate())
	if err != nil {
		return nil, fmt.Errorf("kubeapiserver: %w", err)
	}
	if err := s.install(gs, cfg); err != nil {
		return nil, err
	}
	return gs, nil
}

// serve lists the resources the server serves, with the verbs opts
// gives them, and the admission their writes go through.
func (s *Server) serve(st *apistorage.Server, opts Options) error {
	var writes []string
	if opts.Writes {
		writes = writeVerbs
	}
	s.served = []served{{storage: st, writes: writes}}
	for _, also := range opts.Also {
		s.served = append(s.served, served{storage: also, writes: writes})
	}
	if opts.Namespaces == nil {
		return nil
	}
	if res := opts.Namespaces.Resource(); res.GroupResource() != namespacesResource || res.Version != "v1" || res.Namespaced {
		return fmt.Errorf("kubeapiserver: Options.Namespaces stores %s, version %s, namespaced %v; want the core group's v1 namespaces",
			res.GroupResource(), res.Version, res.Namespaced)
	}
	if opts.Writes {
		writes = []string{"create", "delete"}
	}
	s.served = append(s.served, served{storage: opts.Namespaces, writes: writes})
	s.admit = namespaceLifecycle{namespaces: s.registry(opts.Namespaces)}
	return nil
}

// waitReady polls /readyz until the server answers 200.
func (s *Server) waitReady(ctx context.Context) error {
	c, err := s.httpClient(User)
	if err != nil {
		return err
	}
	defer c.CloseIdleConnections()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.url+"/readyz", nil)
		if resp, err := c.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kubeapiserver: not ready: %w", ctx.Err())
		case <-s.stopped:
			return fmt.Errorf("kubeapiserver: stopped before it was ready")
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// URL is where the server listens: https://127.0.0.1:<port>.
func (s *Server) URL() string { return s.url }

// Close shuts the server down: open watches end, and it stops listening.
// The storage is the caller's to close.
func (s *Server) Close() {
	s.once.Do(func() {
		s.stop()
		<-s.stopped
	})
}

// retryAfter formats seconds for a Retry-After header.
func retryAfter(seconds int) string { return strconv.Itoa(seconds) }
