package cluster

import (
	"fmt"
	"net"
	"net/http"
	"net/url"

	"k8s.io/client-go/rest"

	"github.com/cachelab/cachelab/tcpproxy"
	"github.com/cachelab/cachelab/wire"
)

// A Proxy sits between a run's informers and the cluster, on loopback
// (package tcpproxy):
//
//	informer ──▶ HTTP client ══TLS══▶ Proxy (127.0.0.1:port) ──TCP──▶ the cluster's kube-apiserver
//
// It forwards bytes and nothing else: TLS is between each client and the
// cluster, end to end, with the kubeconfig's credentials. A run's
// disconnect cuts the connections there, as a network would.
type Proxy struct {
	c      *Cluster
	host   string          // the server's name, for the clients' certificate checks
	tcp    *tcpproxy.Proxy // nil when direct
	direct string          // why the clients go straight to the cluster; "" when through the proxy
}

// StartProxy starts a proxy to the cluster's server on an ephemeral
// loopback port. Where the clients would not reach the cluster straight
// (the kubeconfig names a proxy, or the environment's HTTPS_PROXY covers
// the server), the proxy is not put in between: its clients go the way
// the kubeconfig says, Cut cuts nothing, and Direct says why.
func (c *Cluster) StartProxy() (*Proxy, error) {
	u, err := url.Parse(c.cfg.Host)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("the cluster's server %q is not a URL", c.cfg.Host)
	}
	p := &Proxy{c: c, host: u.Hostname()}
	if p.direct = viaProxy(c.cfg, u); p.direct != "" {
		return p, nil
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	if p.tcp, err = tcpproxy.Start(net.JoinHostPort(u.Hostname(), port)); err != nil {
		return nil, err
	}
	return p, nil
}

// viaProxy says why the clients of cfg would reach u through an HTTP
// proxy of the user's, or "".
func viaProxy(cfg *rest.Config, u *url.URL) string {
	if cfg.Proxy != nil {
		if pu, err := cfg.Proxy(&http.Request{URL: u}); err != nil || pu != nil {
			return "the kubeconfig sends the cluster's requests through a proxy of its own (proxy-url)"
		}
		return ""
	}
	if pu, err := http.ProxyFromEnvironment(&http.Request{URL: u}); err != nil || pu != nil {
		return "the environment (HTTPS_PROXY) sends the cluster's requests through a proxy"
	}
	return ""
}

// Direct is why the clients reach the cluster straight, or "" when they
// go through the proxy.
func (p *Proxy) Direct() string { return p.direct }

// Config is the cluster's client configuration (Cluster.Config) through
// the proxy: its address is the proxy's, and the server's certificate is
// still checked against the server's name.
func (p *Proxy) Config() *rest.Config {
	cfg := p.c.Config()
	if p.tcp == nil {
		return cfg
	}
	u, _ := url.Parse(cfg.Host) // parsed in StartProxy
	u.Host = p.tcp.Addr()
	cfg.Host = u.String()
	if cfg.TLSClientConfig.ServerName == "" && u.Scheme == "https" {
		cfg.TLSClientConfig.ServerName = p.host
	}
	return cfg
}

// Wire is package wire's client configuration through the proxy (as
// Cluster.Wire).
func (p *Proxy) Wire() (wire.Config, error) { return wireConfig(p.Config()) }

// Cut resets every connection through the proxy and holds those made
// after it until Restore (tcpproxy.Proxy.Cut); it returns how many it
// reset: none when direct.
func (p *Proxy) Cut() int {
	if p.tcp == nil {
		return 0
	}
	return p.tcp.Cut()
}

// Restore lets connections through again.
func (p *Proxy) Restore() {
	if p.tcp != nil {
		p.tcp.Restore()
	}
}

// Close stops the proxy and closes every connection through it.
func (p *Proxy) Close() error {
	if p.tcp == nil {
		return nil
	}
	return p.tcp.Close()
}
