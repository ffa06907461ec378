package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"k8s.io/client-go/rest"

	"github.com/cachelab/cachelab/wire"
)

// A Proxy sits between a run's informers and the cluster, on loopback:
//
//	informer ──▶ HTTP client ══TLS══▶ Proxy (127.0.0.1:port) ──TCP──▶ the cluster's kube-apiserver
//
// It forwards bytes and nothing else: TLS is between each client and the
// cluster, end to end, with the kubeconfig's credentials, so the proxy
// sees neither a request nor a credential. What it can do is what a
// network does: Cut closes every connection through it (each client
// reads the end of its stream, mid-response if need be) and holds the
// connections made after it, unanswered, until Restore. A run's
// disconnect is that.
//
// Closing one watch without the others is not a proxy's to do: a client
// sends all its requests over one HTTP/2 connection, encrypted, and the
// proxy cannot tell a watch's frames from a LIST's.
type Proxy struct {
	c      *Cluster
	target string // host:port the proxy dials
	host   string // the server's name, for the clients' certificate checks
	ln     net.Listener
	dial   func(ctx context.Context, network, addr string) (net.Conn, error)
	direct string // why the clients go straight to the cluster; "" when through the proxy

	mu     sync.Mutex
	links  map[*link]struct{}
	cut    chan struct{} // closed by Restore; nil while connected
	closed bool
	wg     sync.WaitGroup

	onHeld func() // tests: a connection began to wait for Restore
}

// link is one client's connection through the proxy, and the proxy's to
// the cluster.
type link struct{ in, out net.Conn }

func (l *link) close() {
	_ = l.in.Close()
	if l.out != nil {
		_ = l.out.Close()
	}
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
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	p := &Proxy{c: c, target: net.JoinHostPort(u.Hostname(), port), host: u.Hostname(), links: map[*link]struct{}{}}
	if why := viaProxy(c.cfg, u); why != "" {
		p.direct = why
		return p, nil
	}
	p.dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	if p.ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		return nil, fmt.Errorf("a local proxy to the cluster: %w", err)
	}
	p.wg.Add(1)
	go p.accept()
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
	if p.direct != "" {
		return cfg
	}
	u, _ := url.Parse(cfg.Host) // parsed in StartProxy
	u.Host = p.ln.Addr().String()
	cfg.Host = u.String()
	if cfg.TLSClientConfig.ServerName == "" && u.Scheme == "https" {
		cfg.TLSClientConfig.ServerName = p.host
	}
	return cfg
}

// Wire is package wire's client configuration through the proxy (as
// Cluster.Wire).
func (p *Proxy) Wire() (wire.Config, error) {
	cfg := p.Config()
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		return wire.Config{}, err
	}
	return wire.Config{Host: cfg.Host, Transport: rt}, nil
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		l := &link{in: in}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			_ = in.Close()
			return
		}
		p.links[l] = struct{}{}
		p.wg.Add(1)
		p.mu.Unlock()
		go p.serve(l)
	}
}

// serve forwards one connection, once the proxy is not cut, until either
// end closes it or Cut does.
func (p *Proxy) serve(l *link) {
	defer p.wg.Done()
	defer p.drop(l)
	var first []byte
	for {
		p.mu.Lock()
		held, closed := p.cut, p.closed
		p.mu.Unlock()
		if closed {
			return
		}
		if held == nil {
			break
		}
		// Cut: the connection waits, as a dial into a network that is
		// down waits, until Restore (or Close, or the client gives
		// up). A TLS client speaks first: what it said is kept for
		// the server.
		if first == nil {
			buf := make([]byte, 4096)
			n, err := l.in.Read(buf)
			if err != nil {
				return
			}
			first = buf[:n]
			if p.onHeld != nil {
				p.onHeld()
			}
		}
		<-held
	}
	out, err := p.dial(context.Background(), "tcp", p.target)
	if err != nil {
		return // the client reads an end of stream, as from a server that is not there
	}
	p.mu.Lock()
	if _, ok := p.links[l]; !ok { // cut or closed while dialling
		p.mu.Unlock()
		_ = out.Close()
		return
	}
	l.out = out
	p.mu.Unlock()
	if len(first) > 0 {
		if _, err := out.Write(first); err != nil {
			return
		}
	}
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		if tc, ok := dst.(*net.TCPConn); ok {
			_ = tc.CloseWrite() // a half close carries through
		}
		done <- struct{}{}
	}
	go pipe(out, l.in)
	go pipe(l.in, out)
	<-done
	<-done
}

func (p *Proxy) drop(l *link) {
	p.mu.Lock()
	delete(p.links, l)
	p.mu.Unlock()
	l.close()
}

// Cut closes every connection through the proxy, and holds those made
// after it until Restore. It returns how many it closed.
func (p *Proxy) Cut() int {
	if p.direct != "" {
		return 0
	}
	p.mu.Lock()
	if p.cut == nil {
		p.cut = make(chan struct{})
	}
	ls := make([]*link, 0, len(p.links))
	for l := range p.links {
		ls = append(ls, l)
		delete(p.links, l)
	}
	p.mu.Unlock()
	for _, l := range ls {
		l.close()
	}
	return len(ls)
}

// Restore lets connections through again; those held since Cut are
// closed, and their clients connect again.
func (p *Proxy) Restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut != nil {
		close(p.cut)
		p.cut = nil
	}
}

// Close stops the proxy and closes every connection through it.
func (p *Proxy) Close() error {
	if p.direct != "" {
		return nil
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	err := p.ln.Close()
	ls := make([]*link, 0, len(p.links))
	for l := range p.links {
		ls = append(ls, l)
	}
	if p.cut != nil {
		close(p.cut)
		p.cut = nil
	}
	p.mu.Unlock()
	for _, l := range ls {
		l.close()
	}
	p.wg.Wait()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}
