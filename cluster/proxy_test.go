package cluster

import (
	"bufio"
	"context"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"syscall"
	"testing"

	"k8s.io/client-go/rest"
)

// Through the run's proxy, client-go's transport for the kubeconfig
// still speaks HTTP/2 with the server and checks its certificate against
// the server's name; Cut breaks the connection.
func TestProxyConfig(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "line\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	c := &Cluster{cfg: &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{CAData: ca}}}
	p, err := c.StartProxy()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if p.Direct() != "" {
		t.Fatalf("Direct = %q, want through the proxy", p.Direct())
	}
	cfg := p.Config()
	if u, _ := url.Parse(cfg.Host); u.Host == srv.Listener.Addr().String() {
		t.Fatalf("the clients' address is the server's, %s, not the proxy's", cfg.Host)
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer hc.CloseIdleConnections()
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, cfg.Host+"/", nil)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.ProtoMajor != 2 {
		t.Errorf("protocol %s through the proxy, want HTTP/2", resp.Proto)
	}
	body := bufio.NewReader(resp.Body)
	if _, err := body.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	if n := p.Cut(); n != 1 {
		t.Errorf("Cut closed %d connections, want 1", n)
	}
	if _, err := body.ReadString('\n'); !isReset(err) {
		t.Errorf("reading after Cut: %v, want a connection reset", err)
	}
}

// A kubeconfig that names a proxy of its own keeps it: the run's proxy is
// not put in between, and says why.
func TestProxyLeavesTheUsersProxy(t *testing.T) {
	c := &Cluster{cfg: &rest.Config{Host: "https://203.0.113.7:6443",
		Proxy: func(*http.Request) (*url.URL, error) { return url.Parse("http://proxy.example:3128") }}}
	p, err := c.StartProxy()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if p.Direct() == "" || p.Cut() != 0 {
		t.Errorf("Direct = %q, want a reason; Cut must cut nothing", p.Direct())
	}
	if got := p.Config().Host; got != c.cfg.Host {
		t.Errorf("Host = %q, want the cluster's own", got)
	}
}

// isReset reports whether err is a connection reset, which is what a
// client reads from a connection the proxy cut.
func isReset(err error) bool { return errors.Is(err, syscall.ECONNRESET) }
