package tcpproxy

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"syscall"
	"testing"

	"go.uber.org/goleak"
)

// A server that streams like a watch: a line, then nothing until the
// client goes; and answers anything else with "ok". The caller closes
// it.
func streamingServer(t *testing.T) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var requests atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.URL.Path != "/stream" {
			_, _ = io.WriteString(w, "ok")
			return
		}
		_, _ = io.WriteString(w, "event 1\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	return srv, &requests
}

// through is the server's address through p, and an HTTP/2 client that
// trusts the server's certificate.
func through(srv *httptest.Server, p *Proxy) (string, *http.Client) {
	tr := srv.Client().Transport.(*http.Transport).Clone()
	tr.ForceAttemptHTTP2 = true
	tr.TLSClientConfig.ServerName = "127.0.0.1"
	return "https://" + p.Addr(), &http.Client{Transport: tr}
}

func get(t *testing.T, c *http.Client, host, path string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, host+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c.Do(req)
}

// Through the proxy a client speaks HTTP/2 with the server, its
// certificate checked; Cut ends a stream in the middle as a broken
// connection does, holds the next connection unanswered, and Restore
// lets it through with what the client had already said.
func TestProxyCutsAndHolds(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	srv, requests := streamingServer(t)
	defer srv.Close()
	p, err := Start(srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	held := make(chan struct{}, 1)
	p.onHeld = func() { held <- struct{}{} }
	host, hc := through(srv, p)
	defer hc.CloseIdleConnections()

	resp, err := get(t, hc, host, "/stream")
	if err != nil {
		t.Fatal(err)
	}
	if resp.ProtoMajor != 2 {
		t.Errorf("protocol %s through the proxy, want HTTP/2", resp.Proto)
	}
	body := bufio.NewReader(resp.Body)
	if line, err := body.ReadString('\n'); err != nil || line != "event 1\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	if n := p.Cut(); n != 1 {
		t.Errorf("Cut closed %d connections, want 1", n)
	}
	if _, err := body.ReadString('\n'); !isReset(err) {
		t.Errorf("reading the stream after Cut: %v, want a connection reset", err)
	}
	_ = resp.Body.Close()

	got := make(chan error, 1)
	go func() {
		resp, err := get(t, hc, host, "/after")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if string(b) != "ok" {
				err = errors.New("answer " + string(b))
			}
		}
		got <- err
	}()
	<-held
	if n := requests.Load(); n != 1 {
		t.Errorf("the server saw %d requests while the proxy was cut, want only the first", n)
	}
	if n := p.Held(); n != 1 {
		t.Errorf("Held = %d while a request waits, want 1", n)
	}
	p.Restore()
	if err := <-got; err != nil {
		t.Errorf("a request held through Cut, after Restore: %v", err)
	}
	if n := requests.Load(); n != 2 {
		t.Errorf("the server saw %d requests, want 2", n)
	}
	if n := p.Held(); n != 0 {
		t.Errorf("Held = %d after Restore, with the connection through, want 0", n)
	}
}

// Close ends the connections through the proxy, the held ones too, and
// leaves no goroutine behind.
func TestProxyClose(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	srv, _ := streamingServer(t)
	defer srv.Close()
	p, err := Start(srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	held := make(chan struct{}, 1)
	p.onHeld = func() { held <- struct{}{} }
	host, hc := through(srv, p)
	defer hc.CloseIdleConnections()
	p.Cut()
	got := make(chan error, 1)
	go func() {
		resp, err := get(t, hc, host, "/held")
		if err == nil {
			_ = resp.Body.Close()
		}
		got <- err
	}()
	<-held
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err == nil {
		t.Error("a request held when the proxy closed succeeded")
	}
	if err := p.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}
}

// isReset reports whether err is a connection reset, which is what a
// client reads from a connection the proxy cut.
func isReset(err error) bool { return errors.Is(err, syscall.ECONNRESET) }
