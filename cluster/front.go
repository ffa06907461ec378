package cluster

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509/pkix"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"

	"github.com/cachelab/cachelab/internal/localca"
)

// front is the HTTP end of the run's proxy: an HTTPS server on loopback,
// with a certificate made for the run, that passes each request of the
// informers on to the cluster through client-go's transport for the
// kubeconfig (its credentials, its proxy settings), as kubectl proxy
// does, and streams each answer back as it comes. Being an HTTP server,
// it can do what a proxy of bytes cannot: end one side's watch
// responses, and only those (closeWatches), as kube-apiserver ends a
// watch at its timeout. Each side presents a token of its own (made for
// the run, good only here, never sent on), which says whose a request is.
type front struct {
	upstream *url.URL
	rt       http.RoundTripper
	ln       net.Listener
	srv      *http.Server
	ca       []byte // the certificate (and its CA) the clients trust

	mu      sync.Mutex
	sides   map[string]string // token -> side
	watches map[*servedWatch]struct{}
}

// servedWatch is a watch response being streamed.
type servedWatch struct {
	side   string
	end    chan struct{} // closed by closeWatches
	once   sync.Once
	cancel context.CancelFunc
}

func (w *servedWatch) stop() {
	w.once.Do(func() { close(w.end); w.cancel() })
}

// startFront starts a front to the cluster cfg reaches, on an ephemeral
// loopback port.
func startFront(cfg *rest.Config) (*front, error) {
	u, err := url.Parse(cfg.Host)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("the cluster's server %q is not a URL", cfg.Host)
	}
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, err
	}
	cert, certPEM, err := loopbackCert()
	if err != nil {
		return nil, fmt.Errorf("a certificate for the run's proxy: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("the run's proxy: %w", err)
	}
	f := &front{upstream: u, rt: rt, ln: ln, ca: certPEM, sides: map[string]string{}, watches: map[*servedWatch]struct{}{}}
	f.srv = &http.Server{Handler: f, ErrorLog: log.New(io.Discard, "", 0),
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}}
	go func() { _ = f.srv.ServeTLS(ln, "", "") }()
	return f, nil
}

// loopbackCert is a certificate for 127.0.0.1, made for one run and
// kept in memory by a CA of the run's own (internal/localca): the
// certificate to serve, and the CA's PEM for the clients to trust.
// ECDSA keys, each made in a fraction of a millisecond (client-go's
// certutil makes two RSA keys, about 0.2 s of every run's start).
func loopbackCert() (tls.Certificate, []byte, error) {
	ca, err := localca.New("cachelab-proxy CA", time.Now())
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	pair, err := ca.Issue(pkix.Name{CommonName: "cachelab-proxy"}, localca.Server)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	cert, err := pair.TLS()
	return cert, ca.CertPEM(), err
}

// addr is the front's address, host:port.
func (f *front) addr() string { return f.ln.Addr().String() }

// token is side's token, made the first time it is asked for.
func (f *front) token(side string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	for t, s := range f.sides {
		if s == side {
			return t
		}
	}
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	t := hex.EncodeToString(b)
	f.sides[t] = side
	return t
}

// Headers a proxy does not pass on: they are about one connection
// (RFC 9110, section 7.6.1), or, for Authorization, the run's token.
var hopHeaders = []string{"Connection", "Keep-Alive", "Proxy-Connection", "Proxy-Authenticate", "Proxy-Authorization",
	"Te", "Trailer", "Transfer-Encoding", "Upgrade"}

func (f *front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	side, ok := f.sides[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
	f.mu.Unlock()
	if !ok {
		http.Error(w, "the run's proxy serves the run's informers only", http.StatusUnauthorized)
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	out := r.Clone(ctx)
	out.RequestURI, out.Host = "", ""
	u := *f.upstream
	u.Path = strings.TrimSuffix(u.Path, "/") + r.URL.Path
	u.RawPath, u.RawQuery = "", r.URL.RawQuery
	out.URL = &u
	out.Header.Del("Authorization")
	for _, h := range hopHeaders {
		out.Header.Del(h)
	}
	resp, err := f.rt.RoundTrip(out)
	if err != nil {
		http.Error(w, "the run's proxy could not reach the cluster: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	var sw *servedWatch
	if q := r.URL.Query().Get("watch"); q == "true" || q == "1" {
		// Known before the client has its answer: a watch whose client
		// has it can be ended.
		sw = &servedWatch{side: side, end: make(chan struct{}), cancel: cancel}
		f.mu.Lock()
		f.watches[sw] = struct{}{}
		f.mu.Unlock()
		defer func() {
			f.mu.Lock()
			delete(f.watches, sw)
			f.mu.Unlock()
		}()
	}
	for k, vv := range resp.Header {
		w.Header()[k] = vv
	}
	for _, h := range hopHeaders {
		w.Header().Del(h)
	}
	w.WriteHeader(resp.StatusCode)
	if fl, ok := w.(http.Flusher); ok {
		fl.Flush() // a watch's client has its answer before its first event
	}
	stream(w, resp.Body, sw)
}

// stream copies body to w, flushing after each read, until body ends or,
// for a watch, closeWatches ends it. The response then ends cleanly: the
// client reads the end of its stream.
func stream(w http.ResponseWriter, body io.Reader, sw *servedWatch) {
	fl, _ := w.(http.Flusher)
	buf := make([]byte, 32<<10)
	for {
		n, err := body.Read(buf)
		if sw != nil {
			select {
			case <-sw.end:
				return
			default:
			}
		}
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			if fl != nil {
				fl.Flush()
			}
		}
		if err != nil {
			return
		}
	}
}

// closeWatches ends the watch responses of side being streamed, and
// returns how many.
func (f *front) closeWatches(side string) int {
	f.mu.Lock()
	var ws []*servedWatch
	for w := range f.watches {
		if w.side == side {
			ws = append(ws, w)
		}
	}
	f.mu.Unlock()
	for _, w := range ws {
		w.stop()
	}
	return len(ws)
}

func (f *front) close() error {
	err := f.srv.Close()
	utilnet.CloseIdleConnectionsFor(f.rt)
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}
