package wire

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/utils/clock"
)

// Config says where the server is and how to talk to it.
type Config struct {
	// Host is the server's base URL: https://127.0.0.1:6443. A path in it
	// is kept, in front of every request's.
	Host string
	// TLS is the client's TLS configuration (CA, client certificate).
	TLS *tls.Config
	// UserAgent is sent with every request.
	UserAgent string
	// QPS and Burst are the client's own rate limit (client-go's defaults,
	// 5 and 10, if zero); a negative QPS means none.
	QPS   float32
	Burst int
	// Transport, if set, carries the requests instead of a transport made
	// from TLS (a test's, or one that goes through a proxy).
	Transport http.RoundTripper
}

// NewTransport is the transport a client makes for itself when Config
// has none: client-go's defaults (k8s.io/client-go/transport cache.go and
// apimachinery's SetTransportDefaults), with tls. A caller that needs
// one of them otherwise (a simulation, which keeps the wall clock out of
// what it shows) changes it and passes the transport in Config.
func NewTransport(tls *tls.Config) *http.Transport {
	return &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		TLSClientConfig:     tls,
		TLSHandshakeTimeout: 10 * time.Second,
		MaxIdleConnsPerHost: 25,
		ForceAttemptHTTP2:   true, // as client-go: every request on one connection
		HTTP2:               &http.HTTP2Config{SendPingTimeout: 30 * time.Second, PingTimeout: 15 * time.Second},
	}
}

// DefaultUserAgent is what the client says it is.
const DefaultUserAgent = "cachelab/wire"

// client sends requests to the server, as client-go's REST client does:
// rate-limited, retried where a server asks for it (429 or 5xx with
// Retry-After) or a connection broke, and each try reported.
type client struct {
	http      *http.Client
	base      *url.URL
	userAgent string
	limit     *limiter
	clock     clock.Clock // retry waits and the rate limit
	observe   func(Exchange)
}

// maxRetries is how many times a request is tried again: 11 tries in all.
const maxRetries = 10

func newClient(cfg Config, clk clock.Clock, observe func(Exchange)) (*client, error) {
	base, err := url.Parse(cfg.Host)
	if err != nil {
		return nil, fmt.Errorf("wire: the server's address %q: %w", cfg.Host, err)
	}
	if base.Scheme != "https" && base.Scheme != "http" || base.Host == "" {
		return nil, fmt.Errorf("wire: the server's address %q is not an http(s) URL", cfg.Host)
	}
	rt := cfg.Transport
	if rt == nil {
		rt = NewTransport(cfg.TLS)
	}
	qps, burst := cfg.QPS, cfg.Burst
	if qps == 0 {
		qps = 5
	}
	if burst == 0 {
		burst = 10
	}
	ua := cfg.UserAgent
	if ua == "" {
		ua = DefaultUserAgent
	}
	if observe == nil {
		observe = func(Exchange) {}
	}
	return &client{http: &http.Client{Transport: rt}, base: base, userAgent: ua,
		limit: newLimiter(qps, burst, clk), clock: clk, observe: observe}, nil
}

// Exchange is one try of a request and what came back: a status, or the
// error that kept one from coming.
type Exchange struct {
	Method string
	URI    string // path and query
	Try    int    // 1 for the first
	Status int    // 0 if no response came
	Err    error
	// RetryAfter is the Retry-After header, as sent ("" for none).
	RetryAfter string
	// Request is the try as it was sent: its context carries the
	// caller's values, so an observer can tell which of its calls a try
	// belongs to.
	Request *http.Request
}

// tries is the bookkeeping of one request's tries: how many, what the
// last two transport errors were, and how long to wait before the next.
type tries struct {
	n                 int
	current, previous error
	wait              time.Duration
	again             bool
}

// note keeps err as the latest error, and the one before it.
func (t *tries) note(err error) {
	if t.current != nil {
		t.previous = t.current
	}
	t.current = err
}

// next decides whether to try again after resp or err, and how long to
// wait first: a transport error retryable says is waited on for 1 s; a
// 429 or 5xx for its Retry-After, if it has a whole number of seconds.
func (t *tries) next(resp *http.Response, err error, retryable func(error) bool) bool {
	defer t.note(err)
	t.again = false
	if resp == nil && err == nil {
		return false
	}
	t.n++
	if t.n > maxRetries {
		return false
	}
	seconds := 1
	switch {
	case err != nil && !retryable(err):
		return false
	case err == nil:
		if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode < 500 {
			return false
		}
		s, ok := retryAfter(resp)
		if !ok {
			return false
		}
		seconds = s
	}
	t.wait, t.again = time.Duration(seconds)*time.Second, true
	return true
}

// wrap is err, saying what the try before it failed with, if that was
// another error (client-go's WrapPreviousError).
func (t *tries) wrap(err error) error {
	if err == nil || t.previous == nil || err.Error() == t.previous.Error() {
		return err
	}
	prev := t.previous
	if u, ok := prev.(*url.Error); ok && u.Unwrap() != nil {
		prev = u.Unwrap()
	}
	return &previousError{err: err, previous: prev}
}

type previousError struct{ err, previous error }

func (e *previousError) Error() string {
	return fmt.Sprintf("%s - error from a previous attempt: %s", e.err.Error(), e.previous.Error())
}

func (e *previousError) Unwrap() error { return e.err }

// before runs before each try: a context that has ended ends the
// request; a retry waits its wait and then for the rate limit.
func (c *client) before(ctx context.Context, t *tries) error {
	if err := ctx.Err(); err != nil {
		t.note(err)
		return err
	}
	if !t.again {
		return nil
	}
	c.sleep(ctx, t.wait)
	if err := c.limit.wait(ctx); err != nil {
		t.note(ctx.Err())
		return err
	}
	return nil
}

// sleep waits d on the client's clock, or until ctx ends.
func (c *client) sleep(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	tm := c.clock.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C():
	case <-ctx.Done():
	}
}

// do sends one try of a GET for uri.
func (c *client) do(ctx context.Context, uri string, try int) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url(uri), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", jsonType)
	req.Header.Set("User-Agent", c.userAgent)
	resp, err := c.http.Do(req)
	x := Exchange{Method: http.MethodGet, URI: uri, Try: try, Err: err, Request: req}
	if resp != nil {
		x.Status, x.RetryAfter = resp.StatusCode, resp.Header.Get("Retry-After")
	}
	c.observe(x)
	return resp, err
}

func joinPath(base, p string) string {
	if base == "" || base == "/" {
		return p
	}
	return base + p
}

// drain reads a little of a body that will not be used, so that its
// connection can be used again, and closes it.
func drain(resp *http.Response) {
	if resp == nil {
		return
	}
	defer resp.Body.Close()
	if resp.ContentLength <= 2<<10 {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 2<<10))
	}
}

// listRetryable are the transport errors a LIST is tried again after:
// the connection reset or closed under it.
func listRetryable(err error) bool {
	return utilnet.IsConnectionReset(err) || utilnet.IsProbableEOF(err) || utilnet.IsHTTP2ConnectionLost(err)
}

// watchRetryable are those a WATCH is tried again after.
func watchRetryable(err error) bool { return utilnet.IsProbableEOF(err) || utilnet.IsTimeout(err) }

// url is the full URL of uri (a path and query of ListerWatcher.URI's
// making): the server's address, and its path in front of uri's.
func (c *client) url(uri string) string {
	u := *c.base
	ref, err := url.Parse(uri)
	if err != nil {
		return c.base.String() + uri
	}
	u.Path, u.RawQuery = joinPath(c.base.Path, ref.Path), ref.RawQuery
	return u.String()
}
