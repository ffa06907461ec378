package world

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cachelab/cachelab/sim/trace"
)

// Over the wire, a request the Conn makes (a LIST, or a WATCH it names
// w1, w2, ...) may go out more than once: each client tries again after
// a 429 or 5xx with Retry-After, or a broken connection (REFERENCE.md
// H4). Each try is a line of the wire layer, and a line says which
// request it is a try of, which try it is, what the client waited before
// it (as the rule it followed: wall time never reaches a trace), its
// status and the Retry-After the server sent:
//
//	w2 GET /api/v1/pods?...&watch=true 429 Too Many Requests (Retry-After: 1)
//	w2 try 2 (after Retry-After: 1s) GET /api/v1/pods?...&watch=true 429 Too Many Requests (Retry-After: 1)
//
// The Conn puts a wireCall in the context of each call it makes; both
// clients send each try with that context (cachelab's reports it in
// wire.Exchange.Request, client-go's round tripper sees it on the
// request), so both sides' lines are derived the same way, from what
// went over the wire, and compared.

// wireCall is one LIST or WATCH call of the Conn: its name in the wire
// lines and its tries so far.
type wireCall struct {
	name string // the watch's id (w1, ...), or "LIST"
	mu   sync.Mutex
	// tries is how many tries went out; status, retryAfter and broke
	// are what the last one got, and decide what the next waited.
	tries      int
	status     int
	retryAfter string
	broke      bool
}

type wireCallKey struct{}

// withWireCall is ctx carrying a new call named name.
func withWireCall(ctx context.Context, name string) (context.Context, *wireCall) {
	c := &wireCall{name: name}
	return context.WithValue(ctx, wireCallKey{}, c), c
}

// wireCallOf is the call ctx carries, or nil.
func wireCallOf(ctx context.Context) *wireCall {
	c, _ := ctx.Value(wireCallKey{}).(*wireCall)
	return c
}

// try counts a try of the call and what it got; it returns its number,
// and what the client waited before it (H4): the Retry-After of the try
// before, or 1 s after a broken connection; "" for the first.
func (c *wireCall) try(status int, retryAfter string, err error) (n int, after string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tries++
	switch {
	case c.tries == 1:
	case c.retryAfter != "":
		after = "after Retry-After: " + c.retryAfter + "s"
	case c.broke:
		after = "after 1s, as after a broken connection"
	}
	c.status, c.retryAfter, c.broke = status, retryAfter, err != nil
	return c.tries, after
}

// last is the call's tries so far, and the last one's status; none for
// no call.
func (c *wireCall) last() (tries, status int) {
	if c == nil {
		return 0, 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tries, c.status
}

// recordTry writes one try as a wire line, as kubectl -v=6 shows it
// ("GET /api/v1/pods?limit=500&resourceVersion=0 200 OK", or the error
// that came instead of a status), after the call it is a try of and its
// number (from the request's context, ctx), and with the Retry-After
// the server sent.
func recordTry(rec *trace.Recorder, ctx context.Context, method, uri string, status int, retryAfter string, err error) {
	e := trace.Event{Layer: trace.LayerWire, Kind: trace.KindWire, Op: method, Status: status, RetryAfter: retryAfter}
	head := ""
	if c := wireCallOf(ctx); c != nil {
		n, after := c.try(status, retryAfter, err)
		e.Try, head = n, c.name+" "
		if c.name != "LIST" {
			e.Watch = c.name
		}
		if n > 1 {
			head += "try " + strconv.Itoa(n)
			if after != "" {
				head += " (" + after + ")"
			}
			head += " "
		}
	}
	e.Detail = fmt.Sprintf("%s%s %s %d %s", head, method, uri, status, http.StatusText(status))
	if retryAfter != "" {
		e.Detail += " (Retry-After: " + retryAfter + ")"
	}
	if err != nil {
		e.Status, e.Detail = 0, fmt.Sprintf("%s%s %s failed: %s", head, method, uri, loopback.ReplaceAllString(errText(err), "127.0.0.1:PORT"))
	}
	rec.Record(e)
}

// recordStreamError writes the wire line of an ERROR event that came
// inside a watch's stream: its response's status said the watch began
// (200 OK), and the error came later, as an event in the body. An ERROR
// the client made itself, having failed to decode the stream (H6), says
// so instead.
func recordStreamError(rec *trace.Recorder, c *wireCall, st *metav1.Status) {
	tries, status := c.last()
	e := trace.Event{Layer: trace.LayerWire, Kind: trace.KindWire, Op: "ERROR", Watch: c.name, Try: tries, Status: status}
	code := fmt.Sprintf("%d %s", st.Code, st.Reason)
	e.Detail = fmt.Sprintf("%s ERROR %s came inside its %d %s stream, as an event: the status line had said the watch began", c.name, code, status, http.StatusText(status))
	if clientMade(st) {
		e.Detail = fmt.Sprintf("%s ERROR %s made by its client, which could not decode the %d %s stream", c.name, code, status, http.StatusText(status))
	}
	rec.Record(e)
}

// clientMade reports whether an ERROR's status is one a client makes
// when it cannot decode a watch's stream (H6).
func clientMade(st *metav1.Status) bool {
	if st.Details == nil {
		return false
	}
	for _, c := range st.Details.Causes {
		if c.Type == "ClientWatchDecoding" {
			return true
		}
	}
	return false
}
