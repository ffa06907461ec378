package kubeapiserver

import (
	"context"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"
)

// The wall clock in kube-apiserver over HTTPS. The storage's timers run on
// the server's clock (apistorage/walltime.go lists the ones that do not),
// but the HTTP server and its handlers add timers of their own, on the
// wall clock, and so do the clients. In a simulation only the scenario's
// clock is time: a timer that fires after minutes of wall time makes what
// a run prints depend on how long a person read the screen at a --step
// prompt (issue 47: after a pause of five minutes, the watch handler
// ended w1 at its timeoutSeconds=300, while the scenario's clock stood
// still). Each is accounted for:
//
//   - A watch's timeout (get.go handleWatch: a context that ends at
//     timeoutSeconds, and the watch handler's own timer, watch.go
//     realTimeoutFactory; without timeoutSeconds, a pick in [1, 2) times
//     the minimum request timeout, 30 minutes). On the server's clock:
//     scenarioTimeouts takes the watch's timeout off the request before
//     the handler reads it, gives the handler one it never reaches
//     (wallNever), and clockWatcher ends the watch when the timeout
//     passes on the server's clock.
//   - The timeout of every other request (WithTimeoutForNonLongRunningRequests
//     and WithRequestDeadline, 60 s by default, Config.RequestTimeout):
//     a LIST waiting in a watch cache for it to catch up waits on the
//     server's clock (C1, C6), and over a --step pause it would get 504
//     from the filter. Out of the way: wallNever.
//   - The HTTP server's idle timeout (90 s) and read-header timeout (32 s),
//     fixed in k8s.io/apiserver's secure serving: kept. An idle connection
//     carries no request; its client opens another for the next, and no
//     trace line tells connections apart. A client waits 32 s before it
//     sends headers only while its connection is held by a cut proxy,
//     and the proxy sends what it kept at once when the network is back.
//   - The clients' TLS handshake timeout (10 s, client-go's and package
//     wire's transports): a try made while the network is down waits in
//     the proxy, in the middle of its handshake, for as long as the
//     scenario keeps it down; sim/world gives both sides' transports
//     none (world.noHandshakeTimeout).
//   - The clients' HTTP/2 health checks (a ping after 30 s with nothing
//     read, dropped after 15 s without an answer): kept. The in-process
//     server answers a ping at once, paused at a prompt or not.
//   - The clients' retries (a Retry-After, 1 s after a reset) and rate
//     limit (H4, H5): kept, as client-go's are, on the wall clock. They
//     decide when a request goes out, never what it is answered:
//     settling waits for each request a side has in progress.

// wallNever is a wall-clock timeout that no run reaches: a year.
const wallNever = 365 * 24 * time.Hour

// scenarioTimeout is the context key of a watch's timeout, taken off its
// request by scenarioTimeouts for clockWatcher.
type scenarioTimeout struct{}

// scenarioTimeouts moves each watch's timeout off the wall clock: it takes
// the timeout the request asks for (or picks one as kube-apiserver does
// for a request that does not) into the request's context, and replaces
// it with wallNever, so that neither the handler's context nor its timer
// ends the watch. clockWatcher ends it on the server's clock.
func scenarioTimeouts(h http.Handler, minRequestTimeout time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		q := req.URL.Query()
		if !isWatch(q.Get("watch")) {
			h.ServeHTTP(w, req)
			return
		}
		timeout := time.Duration(0)
		if q.Has("timeoutSeconds") {
			n, err := strconv.ParseInt(q.Get("timeoutSeconds"), 10, 64)
			if err != nil || n < 0 {
				h.ServeHTTP(w, req) // the handler refuses it, or ends it at once, as kube-apiserver does
				return
			}
			timeout = time.Duration(n) * time.Second
		}
		if timeout == 0 {
			timeout = time.Duration(float64(minRequestTimeout) * (rand.Float64() + 1)) // get.go handleWatch
		}
		q.Set("timeoutSeconds", strconv.FormatInt(int64(wallNever/time.Second), 10))
		r := req.Clone(context.WithValue(req.Context(), scenarioTimeout{}, timeout))
		r.URL.RawQuery = q.Encode()
		h.ServeHTTP(w, r)
	})
}

// isWatch reports whether a watch parameter asks for a watch, as the
// parameter codec reads a bool.
func isWatch(v string) bool {
	b, err := strconv.ParseBool(v)
	return err == nil && b
}

// watchTimeout is the timeout scenarioTimeouts took off a watch request.
func watchTimeout(ctx context.Context) (time.Duration, bool) {
	d, ok := ctx.Value(scenarioTimeout{}).(time.Duration)
	return d, ok
}
