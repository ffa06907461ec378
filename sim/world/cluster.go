package world

import (
	"context"
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/cachelab/cachelab/cluster"
	"github.com/cachelab/cachelab/internal/dynclient"
	"github.com/cachelab/cachelab/listwatch"
	"github.com/cachelab/cachelab/sim/trace"
	"github.com/cachelab/cachelab/wire"
)

// On a cluster (package cluster), each side reaches the cluster's
// kube-apiserver as over the wire in process (wire.go), with the
// kubeconfig's credentials, in the run's namespace only, through the
// run's proxy on loopback (cluster.Proxy), which a disconnect cuts:
//
//	informer ──▶ Conn ──▶ HTTP client ══HTTPS══▶ proxy ──▶ the cluster's kube-apiserver
//
// Both sides' clients go through client-go's transport for the
// kubeconfig (rest.TransportFor): it is what turns a kubeconfig's
// credentials (a client certificate, a token, an exec plugin) into
// requests, and nothing in it decides what is requested or how an
// answer is read. Everything above it is each implementation's own.

// ClusterServer is a Server in a cluster: LIST and WATCH over HTTP; the
// levers that need the server's insides are refused before a run starts
// (sim.Check), and say so here too.
type ClusterServer struct{ httpClient }

var _ Server = (*ClusterServer)(nil)

// IsWatchListSemanticsUnSupported is false, as over the wire.
func (s *ClusterServer) IsWatchListSemanticsUnSupported() bool { return false }

var errCluster = errors.New("a cluster's server and etcd are not the run's")

func (s *ClusterServer) ExpiredContinue(metav1.ListOptions) error  { return errCluster }
func (s *ClusterServer) RequestProgress(ctx context.Context) error { return errCluster }
func (s *ClusterServer) SetWatchListFeature(bool)                  {}

// CachelabCluster is cachelab's side on a cluster, through the proxy c:
// package wire's ListerWatcher in namespace ns, each try recorded in rec.
func CachelabCluster(c *cluster.Proxy, ns string, rec *trace.Recorder) (Wire, error) {
	cfg, err := c.Wire()
	if err != nil {
		return Wire{}, err
	}
	rt := cfg.Transport
	observe := func(x wire.Exchange) { recordTry(rec, x.Method, x.URI, x.Status, x.Err) }
	lw, err := wire.NewListerWatcher(cfg, listwatch.Pods,
		wire.Options{Namespace: ns, Observe: observe})
	if err != nil {
		return Wire{}, err
	}
	return Wire{
		Server: func(string) Server { return &ClusterServer{lw} },
		Close:  func() { lw.Close(); utilnet.CloseIdleConnectionsFor(rt) },
	}, nil
}

// ClientGoCluster is client-go's side on a cluster, through the proxy c:
// its dynamic client, Resource(pods).Namespace(ns), with its defaults;
// each try is recorded in rec.
func ClientGoCluster(c *cluster.Proxy, ns string, rec *trace.Recorder) (Wire, error) {
	dyn, closeIdle, err := clientGoDynamic(c.Config(), rec)
	if err != nil {
		return Wire{}, err
	}
	pods := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "pods"}).Namespace(ns)
	return Wire{
		Server: func(string) Server { return &ClusterServer{dynclient.ListWatch(pods)} },
		Close:  closeIdle,
	}, nil
}
