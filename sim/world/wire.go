package world

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/cachelab/cachelab/apistorage/source"
	"github.com/cachelab/cachelab/internal/dynclient"
	"github.com/cachelab/cachelab/sim/trace"
	"github.com/cachelab/cachelab/wire"
)

// Over the wire (--server apiserver), a Conn's requests go to an HTTP
// client, and through it to kube-apiserver in-process (package
// kubeapiserver) in front of the watch cache:
//
//	informer ──▶ Conn ──▶ HTTP client ══HTTPS══▶ proxy ──▶ kube-apiserver ──▶ watch cache ──▶ etcd
//	                      (cachelab: package wire;
//	                       client-go: its dynamic client)
//
// Each side's client is its implementation's own, so everything between
// the Conn and the server (the URL and query, the decoding, retries, the
// rate limit, the stream's framing) is each implementation's; each try
// of each request is a line of the trace's wire layer. A disconnect cuts
// the TCP connections in the proxy (package tcpproxy) and close-watch
// has kube-apiserver end the watches' responses, so each client meets
// them as it would a real network's and server's; fail-next and the cuts
// inside a step stay the Conn's, above the client, as in the other
// worlds. The levers on the server act on the storage behind
// kube-apiserver.

// WireServer is a Server whose LIST and WATCH go over HTTP; what a
// lever does to the server (ExpiredContinue, RequestProgress, the
// WatchList gate) goes to the storage behind it.
type WireServer struct {
	client httpClient
	api    Server // the storage behind kube-apiserver, for the levers
	srv    HTTPSServer
	user   string
}

var _ Server = (*WireServer)(nil)

// ListWithContext lists over HTTP. Where the storage answered from (the
// cache or etcd) does not cross the wire: it is read from the server's
// log of the user's last LIST, for the trace's answer line.
func (s *WireServer) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	obj, err := s.client.ListWithContext(ctx, opts)
	if src := source.Of(ctx); src != nil {
		if last, ok := s.srv.LastListFrom(s.user); ok {
			*src = last
		}
	}
	return obj, err
}

func (s *WireServer) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return s.client.WatchWithContext(ctx, opts)
}

// IsWatchListSemanticsUnSupported is false: the dynamic client does not
// say it, so client-go's reflector tries watch-list, and cachelab's does.
func (s *WireServer) IsWatchListSemanticsUnSupported() bool { return false }

func (s *WireServer) ExpiredContinue(opts metav1.ListOptions) error {
	return s.api.ExpiredContinue(opts)
}

func (s *WireServer) RequestProgress(ctx context.Context) error { return s.api.RequestProgress(ctx) }

func (s *WireServer) SetWatchListFeature(on bool) { s.api.SetWatchListFeature(on) }

// NotesSource is true: the storage behind kube-apiserver says where it
// answered each LIST.
func (s *WireServer) NotesSource() bool { return true }

// httpClient is one side's HTTP client of a resource in a namespace:
// package wire's ListerWatcher, or client-go's dynamic client made one
// (dynclient.ListWatch).
type httpClient interface {
	ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error)
	WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// Wire is one side's HTTP client of a kube-apiserver: Server(ns) is its
// view of a namespace, and Close closes its connections.
type Wire struct {
	Server func(namespace string) Server
	Close  func()
}

// CachelabWire is cachelab's side over the wire: package wire's
// ListerWatcher, authenticated as user, reaching srv at host (a proxy in
// front of it), each try recorded in rec.
func CachelabWire(srv HTTPSServer, api APIServer, user, host string, rec *trace.Recorder) (Wire, error) {
	ep, err := srv.Endpoint(user, host)
	if err != nil {
		return Wire{}, err
	}
	observe := func(x wire.Exchange) {
		recordTry(rec, x.Request.Context(), x.Method, x.URI, x.Status, x.RetryAfter, x.Err)
	}
	tr := wire.NewTransport(ep.TLS)
	noHandshakeTimeout(tr)
	lw, err := wire.NewListerWatcher(wire.Config{Host: ep.Host, TLS: ep.TLS, Transport: tr}, api.Resource(), wire.Options{Observe: observe})
	if err != nil {
		return Wire{}, err
	}
	return Wire{
		Server: func(ns string) Server {
			l, err := lw.WithNamespace(ns)
			if err != nil {
				panic(fmt.Sprintf("world: a namespace the scenario checked: %v", err))
			}
			return &WireServer{client: l, api: api.ListerWatcher(ns), srv: srv, user: user}
		},
		Close: lw.Close,
	}, nil
}

// ClientGoWire is client-go's side over the wire: its dynamic client,
// Resource(pods).Namespace(ns) as dynamicinformer uses it, with its
// defaults, authenticated as user, reaching srv at host (a proxy in
// front of it); each try is recorded in rec by a round tripper below
// client-go's.
func ClientGoWire(srv HTTPSServer, api APIServer, user, host string, rec *trace.Recorder) (Wire, error) {
	ep, err := srv.Endpoint(user, host)
	if err != nil {
		return Wire{}, err
	}
	res := api.Resource()
	gvr := schema.GroupVersionResource{Group: res.Group, Version: res.Version, Resource: res.Resource}
	dyn, closeIdle, err := clientGoDynamic(ep.REST, rec) // with a transport of the run's own
	if err != nil {
		return Wire{}, err
	}
	return Wire{
		Server: func(ns string) Server {
			return &WireServer{client: dynclient.ListWatch(dyn.Resource(gvr).Namespace(ns)), api: api.ListerWatcher(ns), srv: srv, user: user}
		},
		Close: closeIdle,
	}, nil
}

// clientGoDynamic is client-go's dynamic client for cfg, with its
// defaults and each try recorded in rec by a round tripper below
// client-go's, and what closes its idle connections.
func clientGoDynamic(cfg *rest.Config, rec *trace.Recorder) (dynamic.Interface, func(), error) {
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		noHandshakeTimeout(httpTransport(rt)) // client-go's own, made for this config
		return tryRecorder{rt: rt, rec: rec}
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, nil, err
	}
	dyn, err := dynamic.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, nil, err
	}
	return dyn, func() { utilnet.CloseIdleConnectionsFor(hc.Transport) }, nil
}

// noHandshakeTimeout takes the wall clock out of a client's TLS
// handshakes: a try made while a disconnect holds the network down waits
// in the proxy in the middle of its handshake, for as long as the
// scenario keeps the network down, however long a person pauses at a
// --step prompt meanwhile; with client-go's 10 s it would fail then
// (kubeapiserver/walltime.go).
func noHandshakeTimeout(t *http.Transport) { t.TLSHandshakeTimeout = 0 }

// httpTransport is the *http.Transport under a client-go round tripper
// and what wraps it (client-go's TLS cache keeps its own in a
// trackedTransport). A client-go whose transport is of another kind
// fails here, loudly: the run would not be what it says.
func httpTransport(rt http.RoundTripper) *http.Transport {
	for {
		switch t := rt.(type) {
		case *http.Transport:
			return t
		case utilnet.RoundTripperWrapper:
			rt = t.WrappedRoundTripper()
		default:
			panic(fmt.Sprintf("world: client-go's transport is a %T, not an *http.Transport under wrappers", rt))
		}
	}
}

// tryRecorder records each request client-go's transport sends.
type tryRecorder struct {
	rt  http.RoundTripper
	rec *trace.Recorder
}

func (t tryRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.rt.RoundTrip(req)
	status, retryAfter := 0, ""
	if resp != nil {
		status, retryAfter = resp.StatusCode, resp.Header.Get("Retry-After")
	}
	recordTry(t.rec, req.Context(), req.Method, req.URL.RequestURI(), status, retryAfter, err)
	return resp, err
}

func (t tryRecorder) WrappedRoundTripper() http.RoundTripper { return t.rt }

// errText is a transport error without the URL it repeats.
func errText(err error) string {
	s := err.Error()
	if i := strings.Index(s, "\": "); i >= 0 && strings.HasPrefix(s, "Get \"") {
		return s[i+3:]
	}
	return s
}

// loopback is a loopback address with its port: ports differ run to run.
var loopback = regexp.MustCompile(`127\.0\.0\.1:[0-9]+`)
