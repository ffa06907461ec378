package listwatch_test

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cachelab/cachelab/internal/loopback"
	"github.com/cachelab/cachelab/internal/testdeadline"
	"github.com/cachelab/cachelab/listwatch"
)

// Endpoints that cannot work are refused before anything is dialed, with
// what is wrong; etcdctl's own forms (scheme://host:port) pass.
func TestCheckEndpoints(t *testing.T) {
	memory := &tls.Config{} // an Embedded's, made in memory
	for _, tc := range []struct {
		endpoints []string
		tls       listwatch.TLSFiles
		config    *tls.Config
		want      string // "" for no error
	}{
		{endpoints: []string{"http://127.0.0.1:2379"}},
		{endpoints: []string{"https://127.0.0.1:2379/", "https://localhost:22379"}},
		{endpoints: []string{"http://[::1]:2379"}},
		{want: "no etcd endpoints given"},
		{endpoints: []string{"127.0.0.1:2379"}, want: `"127.0.0.1:2379": no scheme (http:// or https://)`},
		{endpoints: []string{"garbage"}, want: `"garbage": no scheme`},
		{endpoints: []string{"unix:///tmp/etcd.sock"}, want: `unsupported scheme "unix"`},
		{endpoints: []string{"https://127.0.0.1"}, want: "no port"},
		{endpoints: []string{"https://:2379"}, want: "no host"},
		{endpoints: []string{"https://127.0.0.1:0"}, want: `port "0" is not a number from 1 to 65535`},
		{endpoints: []string{"https://127.0.0.1:2379/v3"}, want: "only scheme://host:port is allowed"},
		{endpoints: []string{"https://user@127.0.0.1:2379"}, want: "only scheme://host:port is allowed"},
		{endpoints: []string{"http://a:1", "https://b:2"}, want: "endpoints mix http:// and https://"},
		{endpoints: []string{"http://a:1"}, tls: listwatch.TLSFiles{CAFile: "ca.pem"}, want: "TLS files are given but the etcd endpoints are http://"},
		{endpoints: []string{"https://a:1"}, tls: listwatch.TLSFiles{CertFile: "cert.pem"}, want: "TLS files: KeyFile and CertFile must both be present"},
		{endpoints: []string{"https://a:1"}, config: memory},
		{endpoints: []string{"http://a:1"}, config: memory, want: "a TLS configuration is given but the etcd endpoints are http://"},
		{endpoints: []string{"https://a:1"}, tls: listwatch.TLSFiles{CAFile: "ca.pem"}, config: memory, want: "both TLS files and a TLS configuration are given"},
	} {
		err := listwatch.ClientOptions{Endpoints: tc.endpoints, TLS: tc.tls, TLSConfig: tc.config}.Check()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: %v", tc.endpoints, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: got %v, want an error containing %q", tc.endpoints, err, tc.want)
		}
	}
}

// A CA file that holds no certificate trusts nobody: etcd's client
// accepts it (an empty pool), and every server is then "signed by unknown
// authority". Check refuses it, naming the file (issue 27, case 10).
func TestCheckCAFileHoldsACertificate(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"empty.pem": "",
		"text.pem":  "not a certificate\n",
		"key.txt":   "-----BEGIN NOTHING-----\n-----END NOTHING-----\n",
	} {
		file := filepath.Join(dir, name)
		if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		err := listwatch.ClientOptions{Endpoints: []string{"https://a:1"}, TLS: listwatch.TLSFiles{CAFile: file}}.Check()
		want := "listwatch: TLS files: the CA file " + file + " holds no PEM certificate (-----BEGIN CERTIFICATE-----): it would trust no server"
		if err == nil || err.Error() != want {
			t.Errorf("%s: got %v\nwant %s", name, err, want)
		}
	}
}

// When an endpoint does not answer, Connect says why, at once where the
// cause is known at once, instead of the etcd client's "context deadline
// exceeded" at the end of the dial timeout. Where the cause is known at
// once the dial timeout is an hour, longer than the test binary may run:
// a Connect that waited for it fails the test at the binary's deadline,
// and no time of the test's own is held to a bound (a test's verdict must
// not depend on the machine's load).
func TestConnectSaysWhy(t *testing.T) {
	h1 := httptest.NewServer(http.NotFoundHandler())
	defer h1.Close()
	// An HTTPS server whose certificate is signed by httptest's own CA.
	tlsServer := httptest.NewUnstartedServer(http.NotFoundHandler())
	tlsServer.EnableHTTP2 = true
	tlsServer.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshake error is the point
	tlsServer.StartTLS()
	defer tlsServer.Close()
	mute, _ := loopback.Mute(t)
	for _, tc := range []struct {
		name     string
		endpoint string
		timeout  time.Duration
		want     string
	}{
		{"refused", "http://" + loopback.Refused(t), time.Hour, "connection refused: nothing listens on 127.0.0.1:"},
		{"DNS", "http://nosuchhost.invalid:2379", 2 * time.Second, `DNS lookup of "nosuchhost.invalid" failed: `},
		{"an HTTP/1 server", h1.URL, time.Hour, `not an etcd: an HTTP/1 server answered "HTTP/1.1 404 Not Found"`},
		{"a CA it does not know", tlsServer.URL, time.Hour, "TLS: the server's certificate is not trusted: x509: certificate signed by unknown authority"},
		{"no answer", "http://" + mute, 100 * time.Millisecond, "no answer within 100ms: the connection opened, but nothing answered HTTP/2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := listwatch.Connect(context.Background(), listwatch.ClientOptions{Endpoints: []string{tc.endpoint}, DialTimeout: tc.timeout})
			if err == nil {
				c.Close()
				t.Fatal("Connect succeeded")
			}
			if want := "listwatch: etcd at " + tc.endpoint + ": " + tc.want; !strings.HasPrefix(err.Error(), want) {
				t.Errorf("got  %v\nwant %s...", err, want)
			}
		})
	}
}

// The cause stays in the error's chain, for callers that act on it.
func TestConnectErrorWrapsTheCause(t *testing.T) {
	_, err := listwatch.Connect(context.Background(), listwatch.ClientOptions{Endpoints: []string{"http://" + loopback.Refused(t)}})
	var ee *listwatch.EndpointError
	if !errors.Is(err, syscall.ECONNREFUSED) || !errors.As(err, &ee) {
		t.Errorf("errors.Is(ECONNREFUSED), errors.As(*EndpointError): false for %v", err)
	}
}

// A cluster with a member down is used through the others: the first
// endpoint refuses, the second answers, and the client works.
func TestConnectFailsOver(t *testing.T) {
	e := startEtcd(t)
	down := "https://" + loopback.Refused(t)
	opts := e.ClientOptions()
	opts.Endpoints = append([]string{down}, e.Endpoints()...)
	c, err := listwatch.Connect(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The one that answered comes first, so connecting again with
	// c.Endpoints() does not wait on the one that is down.
	if diff := cmp.Diff(append(e.Endpoints(), down), c.Endpoints()); diff != "" {
		t.Errorf("Endpoints() (-want +got):\n%s", diff)
	}
	if _, err := c.Put(testdeadline.Context(t), "k", "v"); err != nil {
		t.Fatalf("put through the endpoint that answers: %v", err)
	}
}

// Cancelling ctx (Ctrl-C) ends Connect at once, whatever the dial
// timeout: here while it waits for an answer that never comes.
func TestConnectHearsCancel(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := errors.New("interrupted")
	mute, dialed := loopback.Mute(t)
	go func() {
		<-dialed
		cancel(stop)
	}()
	_, err := listwatch.Connect(ctx, listwatch.ClientOptions{Endpoints: []string{"http://" + mute}, DialTimeout: time.Hour})
	if !errors.Is(err, stop) {
		t.Errorf("got %v, want the context's cause", err)
	}
}
