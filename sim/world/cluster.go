package world

import (
	"context"
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/cachelab/cachelab/cluster"
	"github.com/cachelab/cachelab/internal/dynclient"
	"github.com/cachelab/cachelab/listwatch"
	"github.com/cachelab/cachelab/sim/trace"
	"github.com/cachelab/cachelab/wire"
)

// On a cluster (package cluster), each side reaches the cluster's
// kube-apiserver as over the wire in process (wire.go), in the run's
// namespace only, through the run's proxy on loopback (cluster.Proxy):
// a disconnect cuts the TCP connections there, and a close-watch has it
// end the side's watch responses (ClusterServer.responses):
//
//	informer ──▶ Conn ──▶ HTTP client ══HTTPS══▶ proxy ══HTTPS══▶ the cluster's kube-apiserver
//
// The proxy passes the requests on with the kubeconfig's credentials,
// through client-go's transport for the kubeconfig; each side's client
// presents a token of its own to the proxy. Everything above the HTTP
// connection is each implementation's own.

// ClusterServer is a Server in a cluster: LIST and WATCH over HTTP; the
// levers that need the server's insides are refused before a run starts
// (sim.Check), and say so here too.
type ClusterServer struct {
	httpClient
	proxy *cluster.Proxy
	side  string // the side's name at the proxy
}

// responses: the run's proxy ends the side's watch responses, as the
// server ends a watch at its timeout (cluster.Proxy.CloseWatches).
func (s *ClusterServer) responses() (responsesOf, string, func()) {
	return responsesOf{s.proxy, s.side}, "the run's proxy", func() { s.proxy.CloseWatches(s.side) }
}

var _ Server = (*ClusterServer)(nil)

// IsWatchListSemanticsUnSupported is false, as over the wire.
func (s *ClusterServer) IsWatchListSemanticsUnSupported() bool { return false }

var errCluster = errors.New("a cluster's server and etcd are not the run's")

func (s *ClusterServer) ExpiredContinue(metav1.ListOptions) error  { return errCluster }
func (s *ClusterServer) RequestProgress(ctx context.Context) error { return errCluster }
func (s *ClusterServer) SetWatchListFeature(bool)                  {}

// CachelabCluster is cachelab's side on a cluster, through the proxy c
// as side: package wire's ListerWatcher of res in namespace ns, each try
// recorded in rec.
func CachelabCluster(c *cluster.Proxy, side string, res listwatch.Resource, ns string, rec *trace.Recorder) (Wire, error) {
	cfg, err := c.WireFor(side)
	if err != nil {
		return Wire{}, err
	}
	rt := cfg.Transport
	observe := func(x wire.Exchange) {
		recordTry(rec, x.Request.Context(), x.Method, x.URI, x.Status, x.RetryAfter, x.Err)
	}
	lw, err := wire.NewListerWatcher(cfg, res,
		wire.Options{Namespace: ns, Observe: observe})
	if err != nil {
		return Wire{}, err
	}
	return Wire{
		Server: func(string) Server { return &ClusterServer{httpClient: lw, proxy: c, side: side} },
		Close:  func() { lw.Close(); utilnet.CloseIdleConnectionsFor(rt) },
	}, nil
}

// ClientGoCluster is client-go's side on a cluster, through the proxy c
// as side: its dynamic client, Resource(res).Namespace(ns), with its
// defaults; each try is recorded in rec.
func ClientGoCluster(c *cluster.Proxy, side string, res listwatch.Resource, ns string, rec *trace.Recorder) (Wire, error) {
	dyn, closeIdle, err := clientGoDynamic(c.ConfigFor(side), rec)
	if err != nil {
		return Wire{}, err
	}
	objs := dyn.Resource(res.GroupVersionResource()).Namespace(ns)
	return Wire{
		Server: func(string) Server {
			return &ClusterServer{httpClient: dynclient.ListWatch(objs), proxy: c, side: side}
		},
		Close: closeIdle,
	}, nil
}
