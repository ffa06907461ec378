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
	"sync/atomic"
	"syscall"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/cachelab/cachelab/internal/testdeadline"
)

// A cluster that streams like a watch on any request with watch=true (a
// line, then nothing until the client goes) and answers "ok" otherwise,
// to the kubeconfig's token only. It counts the requests it served.
func streamingCluster(t *testing.T) (*Cluster, *atomic.Int32) {
	t.Helper()
	var served atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer kubeconfig-token" {
			http.Error(w, "who are you", http.StatusUnauthorized)
			return
		}
		served.Add(1)
		if r.URL.Query().Get("watch") != "true" {
			_, _ = io.WriteString(w, "ok")
			return
		}
		w.(http.Flusher).Flush() // the answer first, as kube-apiserver does
		if r.URL.Query().Get("quiet") == "true" {
			<-r.Context().Done() // a watch with nothing to say
			return
		}
		_, _ = io.WriteString(w, "line\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	return &Cluster{cfg: &rest.Config{Host: srv.URL, BearerToken: "kubeconfig-token", TLSClientConfig: rest.TLSClientConfig{CAData: ca}}}, &served
}

// watch opens a watch through the proxy as side and reads its first line.
func watch(t *testing.T, p *Proxy, side string) (*bufio.Reader, func()) {
	t.Helper()
	cfg := p.ConfigFor(side)
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, cfg.Host+"/api/v1/pods?watch=true", nil)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.ProtoMajor != 2 || resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s through the proxy, want HTTP/2 200", resp.Proto, resp.Status)
	}
	body := bufio.NewReader(resp.Body)
	if line, err := body.ReadString('\n'); err != nil || line != "line\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	return body, func() { _ = resp.Body.Close(); hc.CloseIdleConnections() }
}

// Through the run's proxy each side's client speaks HTTP/2 to the proxy,
// which reaches the cluster with the kubeconfig's credentials, not the
// side's token. CloseWatches ends one side's watch responses, cleanly
// (the client reads the end of the stream), and not the other's; Cut
// resets every connection.
func TestProxy(t *testing.T) {
	c, served := streamingCluster(t)
	p, err := c.StartProxy()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if u, _ := url.Parse(p.ConfigFor("a").Host); u.Host == c.cfg.Host {
		t.Fatalf("the clients' address is the cluster's, not the proxy's")
	}
	a, closeA := watch(t, p, "a")
	defer closeA()
	b, closeB := watch(t, p, "b")
	defer closeB()
	if n := p.CloseWatches("a"); n != 1 {
		t.Errorf("CloseWatches(a) ended %d watches, want 1", n)
	}
	if _, err := a.ReadString('\n'); err != io.EOF {
		t.Errorf("a's watch after CloseWatches: %v, want the end of the stream", err)
	}
	if n := p.Cut(); n != 2 {
		t.Errorf("Cut reset %d connections, want 2 (one a side)", n)
	}
	if _, err := b.ReadString('\n'); !isReset(err) {
		t.Errorf("b's watch after Cut: %v, want a connection reset", err)
	}
	p.Restore()
	if got := served.Load(); got != 2 {
		t.Errorf("the cluster served %d requests, want 2", got)
	}

	// A watch with no event yet has its answer: the proxy passes the
	// answer on before the body.
	cfg0 := p.ConfigFor("a")
	hc0, err := rest.HTTPClientFor(cfg0)
	if err != nil {
		t.Fatal(err)
	}
	defer hc0.CloseIdleConnections()
	req, _ := http.NewRequestWithContext(testdeadline.Context(t), http.MethodGet, cfg0.Host+"/api/v1/pods?watch=true&quiet=true", nil)
	resp0, err := hc0.Do(req)
	if err != nil {
		t.Fatalf("a quiet watch through the proxy: %v", err)
	}
	_ = resp0.Body.Close()

	// A client without a side's token is not passed on.
	cfg := p.ConfigFor("a")
	cfg.BearerToken = "guess"
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer hc.CloseIdleConnections()
	resp, err := hc.Get(cfg.Host + "/api/v1/pods")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || served.Load() != 3 {
		t.Errorf("a stranger's request: %s, the cluster served %d, want 401 and none", resp.Status, served.Load()-3)
	}
}

// isReset reports whether err is a connection reset, which is what a
// client reads from a connection the proxy cut.
func isReset(err error) bool { return errors.Is(err, syscall.ECONNRESET) }
