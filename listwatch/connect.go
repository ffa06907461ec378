package listwatch

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
)

// TLSFiles names the PEM files of a TLS setup, as real etcd clusters use
// them: the CA that signed the peer's certificate, and this side's own
// certificate and key (for client-certificate authentication).
type TLSFiles struct {
	CAFile, CertFile, KeyFile string
}

func (f TLSFiles) empty() bool { return f == TLSFiles{} }

// ClientOptions says how to reach an etcd cluster.
type ClientOptions struct {
	// Endpoints are the cluster's client URLs, http://host:port or
	// https://host:port, all with the same scheme (the etcd client uses
	// the first one's for all).
	Endpoints []string
	// TLS, if set, secures the connection; it needs https:// endpoints.
	// https:// without it (or TLSConfig) trusts the system's CAs.
	TLS TLSFiles
	// TLSConfig, if set, secures the connection with a configuration
	// made in memory, as an Embedded's (Embedded.ClientOptions): its CA
	// and client certificate never touch a disk. It needs https://
	// endpoints, and takes the place of TLS, which must then be empty.
	TLSConfig *tls.Config
	// DialTimeout bounds the check of each endpoint (5s if 0, as
	// etcdctl's --dial-timeout).
	DialTimeout time.Duration
	// InOrder sends every request to the first endpoint that answers, in
	// the order given, and moves to the next only when that one fails
	// (gRPC's pick_first policy), where etcd's client would spread its
	// requests over all the endpoints (round_robin) and so serve each
	// watch stream from whichever member came up next. A simulator uses
	// it so that the member serving a watch is the same on every run.
	InOrder bool

	// crashes says that the server is an Embedded, which this process
	// crashes and restarts: its clients read a stopped server's answer
	// as Unavailable (crashed.go). Only Embedded.ClientOptions sets it.
	crashes bool
}

// DefaultDialTimeout is DialTimeout's default: etcdctl's.
const DefaultDialTimeout = 5 * time.Second

// Check reports what is wrong with opts without dialing anything: an
// endpoint that is not an http:// or https:// URL with a host and a port,
// endpoints of mixed schemes, TLS files with http:// endpoints, or TLS
// files that cannot be read. Connect fails with the same errors.
func (opts ClientOptions) Check() error {
	_, err := opts.tlsConfig()
	return err
}

// tlsConfig checks opts and returns the TLS configuration the endpoints
// need: nil for http://.
func (opts ClientOptions) tlsConfig() (*tls.Config, error) {
	if len(opts.Endpoints) == 0 {
		return nil, errors.New("listwatch: connect: no etcd endpoints given")
	}
	scheme := ""
	for _, ep := range opts.Endpoints {
		u, err := parseEndpoint(ep)
		if err != nil {
			return nil, err
		}
		if scheme != "" && u.Scheme != scheme {
			return nil, fmt.Errorf("listwatch: etcd endpoints mix %s:// and %s://: the etcd client would use %s:// for all", scheme, u.Scheme, scheme)
		}
		scheme = u.Scheme
	}
	switch {
	case opts.TLSConfig != nil && !opts.TLS.empty():
		return nil, errors.New("listwatch: both TLS files and a TLS configuration are given: give one of them")
	case scheme == "http" && !opts.TLS.empty():
		return nil, fmt.Errorf("listwatch: TLS files are given but the etcd endpoints are http://; use https:// to connect with TLS")
	case scheme == "http" && opts.TLSConfig != nil:
		return nil, fmt.Errorf("listwatch: a TLS configuration is given but the etcd endpoints are http://; use https:// to connect with TLS")
	case scheme == "http":
		return nil, nil
	case opts.TLSConfig != nil:
		return opts.TLSConfig.Clone(), nil
	}
	if err := checkCAFile(opts.TLS.CAFile); err != nil {
		return nil, err
	}
	info := transport.TLSInfo{TrustedCAFile: opts.TLS.CAFile, CertFile: opts.TLS.CertFile, KeyFile: opts.TLS.KeyFile}
	cfg, err := info.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("listwatch: TLS files: %w", err)
	}
	return cfg, nil
}

// checkCAFile refuses a CA file (if one is named) that holds no PEM
// certificate. etcd's client reads such a file as an empty pool of CAs,
// which trusts no server: every connection would fail later with
// "certificate signed by unknown authority", far from its cause.
func checkCAFile(file string) error {
	if file == "" {
		return nil
	}
	rest, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("listwatch: TLS files: %w", err)
	}
	for {
		var block *pem.Block
		if block, rest = pem.Decode(rest); block == nil {
			return fmt.Errorf("listwatch: TLS files: the CA file %s holds no PEM certificate (-----BEGIN CERTIFICATE-----): it would trust no server", file)
		}
		if block.Type == "CERTIFICATE" {
			return nil
		}
	}
}

// parseEndpoint checks that ep is a URL etcd's client can dial and this
// package can check: http or https, a host and a port, nothing else.
func parseEndpoint(ep string) (*url.URL, error) {
	bad := func(why string) error {
		return fmt.Errorf("listwatch: etcd endpoint %q: %s; want a URL such as https://127.0.0.1:2379", ep, why)
	}
	if !strings.Contains(ep, "://") {
		return nil, bad("no scheme (http:// or https://)")
	}
	u, err := url.Parse(ep)
	if err != nil {
		return nil, bad(strings.TrimPrefix(err.Error(), fmt.Sprintf("parse %q: ", ep)))
	}
	port, perr := strconv.Atoi(u.Port())
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, bad(fmt.Sprintf("unsupported scheme %q", u.Scheme))
	case u.Hostname() == "":
		return nil, bad("no host")
	case u.Port() == "":
		return nil, bad("no port")
	case perr != nil || port < 1 || port > 65535:
		return nil, bad(fmt.Sprintf("port %q is not a number from 1 to 65535", u.Port()))
	case u.User != nil || u.RawQuery != "" || u.Fragment != "" || (u.Path != "" && u.Path != "/"):
		return nil, bad("only scheme://host:port is allowed")
	}
	return u, nil
}

// Connect returns a client of the etcd cluster at opts.Endpoints (a real
// cluster, or an Embedded one reached only by its endpoints). The Writer
// and ListerWatcher work the same over any of them.
//
// Before it returns, Connect checks the endpoints in turn, each within
// DialTimeout and ctx, until one answers etcd's Status call: a cluster
// with a member down is used through the others, as the client balances
// its requests over the endpoints that answer. When none answers, the
// error says why for each one (connection refused, a DNS failure, the
// x509 reason a TLS handshake failed, a server that is not an etcd)
// rather than the deadline the etcd client's own retries would end in.
// The client's Endpoints() start with the one that answered. Its Watcher
// reads back a previous value etcd left out by a race of its own
// (FillPreviousValues).
func Connect(ctx context.Context, opts ClientOptions) (*clientv3.Client, error) {
	tlsCfg, err := opts.tlsConfig()
	if err != nil {
		return nil, err
	}
	if opts.DialTimeout <= 0 {
		opts.DialTimeout = DefaultDialTimeout
	}
	var dial []grpc.DialOption
	if opts.InOrder {
		// etcd's resolver hands gRPC a service config naming
		// round_robin; without it, the default config applies.
		dial = []grpc.DialOption{grpc.WithDisableServiceConfig(),
			grpc.WithDefaultServiceConfig(`{"loadBalancingPolicy": "pick_first"}`)}
	}
	if opts.crashes {
		dial = append(dial, crashedDialOptions()...)
	}
	client, err := clientv3.New(clientv3.Config{Endpoints: opts.Endpoints, DialTimeout: opts.DialTimeout,
		TLS: tlsCfg, Logger: zap.NewNop(), DialOptions: dial})
	if err != nil {
		return nil, fmt.Errorf("listwatch: connect to %v: %w", opts.Endpoints, err)
	}
	client.Watcher = FillPreviousValues(client.Watcher, client.KV)
	var errs []error
	for _, ep := range opts.Endpoints {
		member, err := checkEndpoint(ctx, client, ep, tlsCfg, opts.DialTimeout)
		if err == nil {
			// The endpoint that answered goes first in client.Endpoints(),
			// so a caller that connects again with them is not held up
			// by the ones that did not.
			rest := slices.DeleteFunc(slices.Clone(opts.Endpoints), func(e string) bool { return e == ep })
			if !opts.InOrder || len(rest) == 0 {
				client.SetEndpoints(append([]string{ep}, rest...)...)
				return client, nil
			}
			pctx, cancel := context.WithTimeout(ctx, opts.DialTimeout)
			err := pin(pctx, client, member, ep, rest...)
			cancel()
			if err != nil {
				_ = client.Close()
				return nil, err
			}
			return client, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	_ = client.Close()
	if ctx.Err() != nil {
		return nil, fmt.Errorf("listwatch: connect to etcd: %w", context.Cause(ctx))
	}
	if len(errs) == 1 {
		return nil, fmt.Errorf("listwatch: %w", errs[0])
	}
	return nil, fmt.Errorf("listwatch: none of the %d etcd endpoints answered:\n  %w", len(errs), lines(errs))
}

// checkEndpoint sees whether the etcd at ep answers, within timeout. It
// first speaks to ep itself, down to the first HTTP/2 frame, so that a
// failure is reported with its cause; then it asks the client for ep's
// Status, which proves an etcd answers there, and says which member.
func checkEndpoint(ctx context.Context, client *clientv3.Client, ep string, tlsCfg *tls.Config, timeout time.Duration) (member uint64, err error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	u, _ := parseEndpoint(ep) // checked by tlsConfig
	if err := probe(ctx, u.Host, tlsCfg, timeout); err != nil {
		return 0, &EndpointError{Endpoint: ep, Err: err}
	}
	st, err := client.Status(ctx, ep)
	if err != nil {
		return 0, &EndpointError{Endpoint: ep, Err: reason(err, "answers HTTP/2 but not etcd's Status call: %v", err)}
	}
	return st.Header.MemberId, nil
}

// EndpointError is why one etcd endpoint did not answer.
type EndpointError struct {
	Endpoint string
	Err      error
}

func (e *EndpointError) Error() string { return fmt.Sprintf("etcd at %s: %v", e.Endpoint, e.Err) }
func (e *EndpointError) Unwrap() error { return e.Err }

// probe dials addr as the etcd client would (TCP, then TLS if tlsCfg is
// set, then HTTP/2, which gRPC runs on) and reports the first step that
// fails, in words: each step's own error is precise where the etcd
// client's retries only end in a deadline.
func probe(ctx context.Context, addr string, tlsCfg *tls.Config, timeout time.Duration) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return dialFailure(addr, timeout, err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Now()) })
	defer stop()
	if tlsCfg != nil {
		host, _, _ := net.SplitHostPort(addr)
		cfg := tlsCfg.Clone()
		if cfg.ServerName == "" {
			cfg.ServerName = host
		}
		cfg.NextProtos = []string{"h2"} // gRPC needs HTTP/2, agreed by ALPN
		tc := tls.Client(conn, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			return tlsFailure(timeout, err)
		}
		if p := tc.ConnectionState().NegotiatedProtocol; p != "h2" {
			return errors.New("not an etcd: the TLS server does not offer HTTP/2 (ALPN h2), which etcd's gRPC needs")
		}
		conn = tc
	}
	return http2Answer(conn, timeout)
}

// http2Preface is what an HTTP/2 client sends first (RFC 9113 section
// 3.4): the connection preface, then its SETTINGS frame (empty). A gRPC
// server, etcd among them, answers with a SETTINGS frame of its own.
var http2Preface = []byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00")

// http2Answer sends the HTTP/2 preface and reads the first frame back.
// With TLS 1.3 this is also where a server that refuses the client's
// certificate says so: after the handshake, which the client sees end
// well.
func http2Answer(conn net.Conn, timeout time.Duration) error {
	if _, err := conn.Write(http2Preface); err != nil {
		return readFailure(conn, timeout, err)
	}
	head := make([]byte, 9) // a frame header: length (3), type (1), flags (1), stream (4)
	n, err := io.ReadFull(conn, head)
	head = head[:n]
	switch {
	case bytes.HasPrefix(head, []byte("HTTP/")):
		rest := make([]byte, 200)
		m, _ := io.ReadAtLeast(conn, rest, 1)
		answer := string(head) + string(rest[:m])
		if strings.Contains(answer, "HTTPS server") { // Go's TLS servers' answer to plain text
			return errors.New("the server speaks TLS: use https://")
		}
		line, _, _ := strings.Cut(answer, "\r\n")
		return fmt.Errorf("not an etcd: an HTTP/1 server answered %q", line)
	case len(head) > 0 && (head[0] == 0x15 || head[0] == 0x16): // a TLS alert or handshake record
		return errors.New("the server speaks TLS: use https://")
	case err != nil:
		return readFailure(conn, timeout, err)
	case head[3] != 0x4: // not SETTINGS
		return fmt.Errorf("not an etcd: the server's first HTTP/2 frame is of type %d, not SETTINGS", head[3])
	}
	return nil
}

// dialFailure says why a TCP connection to addr failed.
func dialFailure(addr string, timeout time.Duration, err error) error {
	var dns *net.DNSError
	switch {
	case errors.As(err, &dns):
		return reason(err, "DNS lookup of %q failed: %s", dns.Name, dns.Err)
	case errors.Is(err, syscall.ECONNREFUSED):
		return reason(err, "connection refused: nothing listens on %s", addr)
	case timedOut(err):
		return reason(err, "no answer within %v: a TCP connection to %s did not open", timeout, addr)
	}
	return reason(err, "cannot connect: %v", err)
}

// tlsFailure says why a TLS handshake failed: the x509 reason when the
// server's certificate is not accepted.
func tlsFailure(timeout time.Duration, err error) error {
	var (
		unknownCA x509.UnknownAuthorityError
		hostname  x509.HostnameError
		invalid   x509.CertificateInvalidError
		record    tls.RecordHeaderError
	)
	switch {
	case errors.As(err, &unknownCA):
		return reason(err, "TLS: the server's certificate is not trusted: %v (is the CA file the one that signed it?)", unknownCA)
	case errors.As(err, &hostname):
		return reason(err, "TLS: the server's certificate is for another name: %v", hostname)
	case errors.As(err, &invalid):
		return reason(err, "TLS: the server's certificate is not valid: %v", invalid)
	case errors.As(err, &record):
		return reason(err, "TLS: the server does not speak TLS (use http://?): %v", err)
	case errors.Is(err, io.EOF), errors.Is(err, syscall.ECONNRESET):
		return reason(err, "TLS: the server closed the connection in the handshake (does it speak TLS? use http:// if not)")
	case strings.Contains(err.Error(), "no application protocol"):
		return reason(err, "not an etcd: the TLS server does not offer HTTP/2 (ALPN h2), which etcd's gRPC needs")
	case timedOut(err):
		return reason(err, "no answer within %v: the TLS handshake did not finish", timeout)
	}
	return reason(err, "TLS handshake failed: %v", err)
}

// readFailure says why the server did not answer HTTP/2 on conn.
func readFailure(conn net.Conn, timeout time.Duration, err error) error {
	_, secure := conn.(*tls.Conn)
	msg := err.Error()
	switch {
	case strings.Contains(msg, "remote error: tls: certificate required"):
		return reason(err, "TLS: the server requires a client certificate (and key): %v", err)
	case strings.Contains(msg, "remote error: tls:"):
		return reason(err, "TLS: the server refused the client certificate: %v", err)
	case !secure && closed(err):
		return reason(err, "the server closed the connection without answering HTTP/2: an etcd with TLS (use https://), or not an etcd")
	case closed(err):
		return reason(err, "not an etcd: the server closed the connection without answering HTTP/2")
	case timedOut(err):
		return reason(err, "no answer within %v: the connection opened, but nothing answered HTTP/2 (not an etcd?)", timeout)
	}
	return reason(err, "no HTTP/2 answer: %v", err)
}

func closed(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET)
}

func timedOut(err error) bool {
	return errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded)
}

// explained is an error said in words a user can act on, wrapping the
// error it explains (so that errors.Is still finds ECONNREFUSED and the
// like).
type explained struct {
	msg string
	err error
}

func (e *explained) Error() string { return e.msg }
func (e *explained) Unwrap() error { return e.err }

func reason(err error, format string, args ...any) error {
	return &explained{msg: fmt.Sprintf(format, args...), err: err}
}

// lines is several errors, one an indented line.
type lines []error

func (l lines) Error() string {
	s := make([]string, len(l))
	for i, err := range l {
		s[i] = err.Error()
	}
	return strings.Join(s, "\n  ")
}

func (l lines) Unwrap() []error { return l }
