package kubeapiserver

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"runtime/pprof"
	"strings"
	"sync"

	"github.com/cachelab/cachelab/apistorage"
)

// Request is one request the server answered, as its access log would
// have it: who sent it, the method and URI, and the status (for a watch,
// the status its response began with).
type Request struct {
	User   string
	Method string
	URI    string // path and query, as sent
	Status int
	// From is where the storage answered a LIST (the watch cache or
	// etcd); unset for anything else.
	From apistorage.Source
}

func (r Request) String() string {
	return fmt.Sprintf("%s %s %d %s", r.Method, r.URI, r.Status, http.StatusText(r.Status))
}

// Requests is every request the server has answered (or begun to answer)
// from user, in the order their statuses were written; "" for every
// user's.
func (s *Server) Requests(user string) []Request {
	s.log.mu.Lock()
	defer s.log.mu.Unlock()
	var out []Request
	for _, r := range s.log.all {
		if user == "" || r.User == user {
			out = append(out, r)
		}
	}
	return out
}

// LastList is user's last LIST (a GET that is not a watch) the server
// answered.
func (s *Server) LastList(user string) (Request, bool) {
	s.log.mu.Lock()
	defer s.log.mu.Unlock()
	for i := len(s.log.all) - 1; i >= 0; i-- {
		if r := s.log.all[i]; r.User == user && r.Method == http.MethodGet && !strings.Contains(r.URI, "watch=true") {
			return r, true
		}
	}
	return Request{}, false
}

// requestLog is the outermost filter: it writes down each request's
// status as the response begins.
type requestLog struct {
	mu      sync.Mutex
	all     []Request
	pending map[string]int // per user: requests received and not yet answered
}

// Pending is how many of user's requests the server has received and
// not yet begun to answer: each is somewhere in the server (a handler, or
// the watch cache, waiting for it to catch up).
func (s *Server) Pending(user string) int {
	s.log.mu.Lock()
	defer s.log.mu.Unlock()
	return s.log.pending[user]
}

func (l *requestLog) wrap(h http.Handler, labels func(user string) pprof.LabelSet) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		l.mu.Lock()
		if l.pending == nil {
			l.pending = map[string]int{}
		}
		l.pending[peer(req)]++
		l.mu.Unlock()
		if labels != nil {
			pprof.SetGoroutineLabels(pprof.WithLabels(req.Context(), labels(peer(req))))
		}
		ctx, from := apistorage.WithSource(req.Context())
		rw := &statusWriter{ResponseWriter: w, log: l, from: from,
			req: Request{User: peer(req), Method: req.Method, URI: req.URL.RequestURI()}}
		h.ServeHTTP(rw, req.WithContext(ctx))
		rw.note(http.StatusOK) // nothing written: net/http sends 200
	})
}

// peer is the common name of the client's certificate: the user the
// authentication filter, further in, will find.
func peer(req *http.Request) string {
	if req.TLS == nil || len(req.TLS.PeerCertificates) == 0 {
		return ""
	}
	return req.TLS.PeerCertificates[0].Subject.CommonName
}

// statusWriter notes the status of its response the first time it is
// written.
type statusWriter struct {
	http.ResponseWriter
	log     *requestLog
	req     Request
	from    *apistorage.Source // filled in by the storage as a LIST is answered
	written bool
}

func (w *statusWriter) WriteHeader(code int) {
	w.note(code)
	w.ResponseWriter.WriteHeader(code)
}

// note writes the request down with its status, the first time.
func (w *statusWriter) note(code int) {
	if w.written {
		return
	}
	w.written = true
	w.req.Status, w.req.From = code, *w.from
	w.log.mu.Lock()
	w.log.all = append(w.log.all, w.req)
	w.log.pending[w.req.User]--
	w.log.mu.Unlock()
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.note(http.StatusOK)
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	w.note(http.StatusOK)
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
