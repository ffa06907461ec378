package cluster

import (
	"net/http"
	"net/url"

	"k8s.io/client-go/rest"

	"github.com/cachelab/cachelab/tcpproxy"
	"github.com/cachelab/cachelab/wire"
)

// A Proxy sits between a run's informers and the cluster, on loopback,
// in two parts:
//
//	informer ──▶ HTTP client ══HTTPS══▶ tcpproxy ──TCP──▶ front ══HTTPS══▶ the cluster's kube-apiserver
//	                                     (Cut)            (CloseWatches;
//	                                                       the kubeconfig's
//	                                                       credentials)
//
// The first forwards the informers' TCP connections and nothing else
// (package tcpproxy): a disconnect cuts them there, as a network would.
// The second (front.go) is an HTTPS server of the run's that passes each
// request on to the cluster with the kubeconfig's credentials, as
// kubectl proxy does: a close-watch ends each side's watch responses
// there, as the server would at a watch's timeout. Each side's client
// trusts the front's certificate and presents a token of its own
// (ConfigFor); only the front speaks to the cluster, through client-go's
// transport for the kubeconfig, and with the kubeconfig's proxy settings
// (proxy-url, HTTPS_PROXY) if it has any.
type Proxy struct {
	c     *Cluster
	front *front
	tcp   *tcpproxy.Proxy
}

// StartProxy starts the run's proxy to the cluster, on ephemeral
// loopback ports.
func (c *Cluster) StartProxy() (*Proxy, error) {
	f, err := startFront(c.Config())
	if err != nil {
		return nil, err
	}
	tcp, err := tcpproxy.Start(f.addr())
	if err != nil {
		_ = f.close()
		return nil, err
	}
	return &Proxy{c: c, front: f, tcp: tcp}, nil
}

// ConfigFor is side's client configuration: the proxy's address, its
// certificate to trust, side's token, and no proxy of the user's between
// (it is on loopback); the kubeconfig's other settings (its rate limit,
// its user agent) as they are, and a dialer of its own, as
// Cluster.Config gives.
func (p *Proxy) ConfigFor(side string) *rest.Config {
	cfg := rest.AnonymousClientConfig(p.c.Config())
	cfg.Host = "https://" + p.tcp.Addr()
	cfg.TLSClientConfig = rest.TLSClientConfig{CAData: p.front.ca}
	cfg.BearerToken = p.front.token(side)
	cfg.Proxy = func(*http.Request) (*url.URL, error) { return nil, nil }
	return cfg
}

// WireFor is package wire's client configuration for side (as
// Cluster.Wire).
func (p *Proxy) WireFor(side string) (wire.Config, error) { return wireConfig(p.ConfigFor(side)) }

// Cut resets every connection of the informers' clients and holds those
// made after it until Restore (tcpproxy.Proxy.Cut); it returns how many
// it reset.
func (p *Proxy) Cut() int { return p.tcp.Cut() }

// Restore lets connections through again.
func (p *Proxy) Restore() { p.tcp.Restore() }

// CloseWatches ends side's watch responses, as the server ends a watch
// at its timeout: each client reads the end of its stream, with no
// event. It returns how many it ended.
func (p *Proxy) CloseWatches(side string) int { return p.front.closeWatches(side) }

// Close stops the proxy and closes every connection through it.
func (p *Proxy) Close() error {
	err := p.tcp.Close()
	if ferr := p.front.close(); err == nil {
		err = ferr
	}
	return err
}
