package memnet

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var addr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 6443}

// TestHTTPS carries HTTP/2 over TLS 1.3 with client certificates' shape of
// handshake (both ends write before they read), and counts every byte.
func TestHTTPS(t *testing.T) {
	n := New(addr, nil)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello "+r.URL.Path)
	}))
	srv.Listener = n.Listener()
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	c := srv.Client()
	tr := c.Transport.(*http.Transport)
	tr.DialContext = n.Dialer("client")
	tr.DialTLSContext = nil
	for i := range 3 {
		resp, err := c.Get(srv.URL + "/x")
		if err != nil {
			t.Fatalf("get %d: %v", i, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(body) != "hello /x" || resp.ProtoMajor != 2 {
			t.Fatalf("got %q over HTTP/%d, want %q over HTTP/2", body, resp.ProtoMajor, "hello /x")
		}
	}
	if p := n.Pending(); p != 0 {
		t.Errorf("Pending after the responses were read = %d, want 0", p)
	}
	tr.CloseIdleConnections()
}

func TestPendingCountsUnreadBytes(t *testing.T) {
	n := New(addr, nil)
	defer n.Close()
	go func() {
		s, err := n.Listener().Accept()
		if err == nil {
			s.Write([]byte("12345"))
		}
	}()
	c, err := n.dial(context.Background(), "x")
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 2)
	if _, err := io.ReadFull(c, buf); err != nil {
		t.Fatal(err)
	}
	if got := n.Pending(); got != 3 {
		t.Errorf("Pending after reading 2 of 5 bytes = %d, want 3", got)
	}
	c.Close()
	if got := n.Pending(); got != 0 {
		t.Errorf("Pending after the reader closed = %d, want 0 (the rest is thrown away)", got)
	}
}

func TestCutResetsAndHoldsDials(t *testing.T) {
	n := New(addr, nil)
	defer n.Close()
	accepted := make(chan net.Conn, 2)
	go func() {
		for {
			s, err := n.Listener().Accept()
			if err != nil {
				return
			}
			accepted <- s
		}
	}()
	c, err := n.dial(context.Background(), "x")
	if err != nil {
		t.Fatal(err)
	}
	s := <-accepted
	if got := n.Cut("x"); got != 1 {
		t.Errorf("Cut reset %d connections, want 1", got)
	}
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("read after a cut: %v, want ECONNRESET", err)
	}
	if _, err := s.Write([]byte("x")); !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("server's write after a cut: %v, want ECONNRESET", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := n.dial(ctx, "x"); !errors.Is(err, context.Canceled) {
		t.Errorf("a dial while cut, its context done: %v; want it held until then", err)
	}
	dialed := make(chan error)
	go func() {
		_, err := n.dial(context.Background(), "x")
		dialed <- err
	}()
	n.Restore("x")
	if err := <-dialed; err != nil {
		t.Fatalf("dial after Restore: %v", err)
	}
	(<-accepted).Close()
}

func TestReadDeadline(t *testing.T) {
	n := New(addr, nil)
	defer n.Close()
	go n.Listener().Accept()
	c, err := n.dial(context.Background(), "x")
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(time.Millisecond))
	_, err = c.Read(make([]byte, 1))
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("read past its deadline: %v, want a timeout", err)
	}
}
