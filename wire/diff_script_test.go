package wire_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/cachelab/cachelab/internal/dynclient"
	"github.com/cachelab/cachelab/listwatch"
	"github.com/cachelab/cachelab/wire"
)

// A real kube-apiserver answers well. These tests answer badly on
// purpose, from a scripted server on loopback, to hold the two clients
// to the same reading of every kind of broken answer: bodies that are
// not what their status says, statuses a client must retry or must not,
// connections that break, and watch streams that end mid-event or carry
// what is not an event. Each side gets a server of its own, playing the
// same script; the requests each received and what each client made of
// the answers are compared.

// reply is one scripted answer.
type reply func(w http.ResponseWriter, r *http.Request)

func body(code int, contentType, text string, header ...string) reply {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		} else {
			w.Header()["Content-Type"] = nil // net/http would sniff one
		}
		w.WriteHeader(code)
		fmt.Fprint(w, text)
	}
}

// reset breaks the connection without an answer.
func reset(w http.ResponseWriter, r *http.Request) {
	c, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(err)
	}
	c.(*net.TCPConn).SetLinger(0)
	c.Close()
}

// resetAfter sends a 200 and text, then breaks the connection.
func resetAfter(text string) reply {
	return func(w http.ResponseWriter, r *http.Request) {
		c, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			panic(err)
		}
		fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n", len(text), text)
		buf.Flush()
		c.(*net.TCPConn).SetLinger(0)
		c.Close()
	}
}

const (
	podJSON   = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"d","resourceVersion":"8"}}`
	listJSON  = `{"apiVersion":"v1","kind":"PodList","metadata":{"resourceVersion":"8"},"items":[` + podJSON + `]}`
	expired   = `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"too old resource version: 1 (5)","reason":"Expired","code":410}`
	bookmark  = `{"type":"BOOKMARK","object":{"apiVersion":"v1","kind":"Pod","metadata":{"resourceVersion":"12","annotations":{"k8s.io/initial-events-end":"true"}}}}`
	added     = `{"type":"ADDED","object":` + podJSON + `}`
	errorJSON = "application/json"
)

// script is a server that answers its i-th request with replies[i]
// (the last reply once they run out), and notes each request's URI.
type script struct {
	mu      sync.Mutex
	replies []reply
	seen    []string
}

func (s *script) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	i := min(len(s.seen), len(s.replies)-1)
	s.seen = append(s.seen, r.Method+" "+r.URL.RequestURI()+" Accept="+r.Header.Get("Accept"))
	s.mu.Unlock()
	s.replies[i](w, r)
}

func (s *script) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen...)
}

// scripted runs the same script for both clients and returns each
// side's lister and its server.
func scripted(t *testing.T, replies ...reply) (ours, theirs lister, so, st *script) {
	t.Helper()
	so, st = &script{replies: replies}, &script{replies: replies}
	a, b := httptest.NewServer(so), httptest.NewServer(st)
	t.Cleanup(a.Close)
	t.Cleanup(b.Close)
	lw, err := wire.NewListerWatcher(wire.Config{Host: a.URL}, listwatch.Pods, wire.Options{Namespace: "d"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(lw.Close)
	cfg := &rest.Config{Host: b.URL, Dial: (&net.Dialer{}).DialContext}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { utilnet.CloseIdleConnectionsFor(hc.Transport) })
	dyn, err := dynamic.NewForConfigAndClient(cfg, hc)
	if err != nil {
		t.Fatal(err)
	}
	return lw, dynclient.ListWatch(dyn.Resource(pods).Namespace("d")), so, st
}

// ports hides the loopback ports in an error's text: each side has a
// server of its own, and each connection a port of its own.
func ports(o outcome) outcome {
	o.Err = loopbackPort.ReplaceAllString(o.Err, "127.0.0.1:PORT")
	return o
}

var loopbackPort = regexp.MustCompile(`127\.0\.0\.1:[0-9]+`)

func sameRequests(t *testing.T, so, st *script) {
	t.Helper()
	if d := cmp.Diff(st.requests(), so.requests()); d != "" {
		t.Errorf("the requests differ, cachelab (+) and client-go (-):\n%s", d)
	}
}

// H2 H3 H4: every broken answer to a LIST.
func TestWireScriptedList(t *testing.T) {
	for _, c := range []struct {
		name    string
		replies []reply
	}{
		{"ok", []reply{body(200, "application/json", listJSON)}},
		{"items without kind", []reply{body(200, "application/json", `{"apiVersion":"v1","kind":"PodList","metadata":{},"items":[{"metadata":{"name":"x"}}]}`)}},
		{"200 empty", []reply{body(200, "application/json", "")}},
		{"200 text", []reply{body(200, "text/plain", "hello")}},
		{"200 no kind", []reply{body(200, "application/json", `{"items":[]}`)}},
		{"200 not json", []reply{body(200, "application/json", `{"items":`)}},
		{"200 failure status", []reply{body(200, "application/json", expired)}},
		{"bad content type", []reply{body(200, "application/json; x=", listJSON)}},
		{"404 text", []reply{body(404, "text/plain", "404 page not found")}},
		{"500 text", []reply{body(500, "text/plain", "boom")}},
		{"502 no type", []reply{body(502, "", "bad gateway")}},
		{"503 json not status", []reply{body(503, "application/json", `{"a":1}`)}},
		{"410 empty", []reply{body(410, "application/json", "")}},
		{"410 status", []reply{body(410, "application/json", expired)}},
		{"500 success status", []reply{body(500, "application/json", `{"kind":"Status","apiVersion":"v1","status":"Success","code":500}`)}},
		{"status without version", []reply{body(410, "application/json", `{"kind":"Status","status":"Failure","message":"m","reason":"Expired","code":410}`)}},
		{"429 date", []reply{body(429, "text/plain", "slow down", "Retry-After", "Wed, 21 Oct 2026 07:28:00 GMT")}},
		{"429 negative twice", []reply{body(429, "text/plain", "m", "Retry-After", "-5"), body(429, "text/plain", "m", "Retry-After", "-5"), body(200, "application/json", listJSON)}},
		{"500 zero always", []reply{body(500, "text/plain", "m", "Retry-After", "0")}},
		{"404 retry-after", []reply{body(404, "text/plain", "m", "Retry-After", "0")}},
		{"reset once", []reply{reset, body(200, "application/json", listJSON)}},
		{"reset mid-body", []reply{resetAfter(`{"apiVersion":"v1","kind":"Pod`), body(200, "application/json", listJSON)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, b, so, st := scripted(t, c.replies...)
			opts := metav1.ListOptions{ResourceVersion: "0", Limit: 500}
			got, want := ports(outcomeOf(a.ListWithContext(context.Background(), opts))), ports(outcomeOf(b.ListWithContext(context.Background(), opts)))
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("cachelab (+) and client-go (-) differ:\n%s", d)
			}
			sameRequests(t, so, st)
		})
	}
}

// H4 H6: every broken answer to a WATCH, and every broken stream.
func TestWireScriptedWatch(t *testing.T) {
	for _, c := range []struct {
		name    string
		replies []reply
	}{
		{"events then end", []reply{body(200, "application/json", added+"\n"+bookmark+"\n")}},
		{"no newlines", []reply{body(200, "application/json", added+bookmark)}},
		{"no content type", []reply{body(200, "", added)}},
		{"text stream", []reply{body(200, "text/plain", added)}},
		{"error 410", []reply{body(200, "application/json", `{"type":"ERROR","object":`+expired+`}`)}},
		{"error not a status", []reply{body(200, "application/json", `{"type":"ERROR","object":`+podJSON+`}`)}},
		{"truncated", []reply{body(200, "application/json", added+`{"type":"ADDED","object":{"api`)}},
		{"garbage", []reply{body(200, "application/json", added+"garbage")}},
		{"unknown type", []reply{body(200, "application/json", `{"type":"WAT","object":`+podJSON+`}`)}},
		{"missing kind", []reply{body(200, "application/json", `{"type":"ADDED","object":{"apiVersion":"v1","metadata":{"name":"x"}}}`)}},
		{"missing apiVersion", []reply{body(200, "application/json", `{"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"x"}}}`)}},
		{"missing object", []reply{body(200, "application/json", `{"type":"ADDED"}`)}},
		{"reset after an event", []reply{resetAfter(added)}},
		{"201", []reply{body(201, "application/json", "")}},
		{"410 status", []reply{body(410, "application/json", expired)}},
		{"429 zero once", []reply{body(429, "text/plain", "m", "Retry-After", "0"), body(200, "application/json", added)}},
		{"500 text", []reply{body(500, "text/plain", "boom")}},
		{"reset once", []reply{reset, body(200, "application/json", added)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, b, so, st := scripted(t, c.replies...)
			opts := metav1.ListOptions{ResourceVersion: "7", AllowWatchBookmarks: true, TimeoutSeconds: ptr(int64(300))}
			// Cancelled at the end: client-go leaves the body of a 200 it
			// cannot decode open, and only its request's context frees it.
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			wa, erra := a.WatchWithContext(ctx, opts)
			wb, errb := b.WatchWithContext(ctx, opts)
			if d := cmp.Diff(ports(outcomeOf(nil, errb)), ports(outcomeOf(nil, erra))); d != "" {
				t.Errorf("the watch's error: cachelab (+) and client-go (-) differ:\n%s", d)
			}
			if (wa == nil) != (wb == nil) {
				t.Fatalf("cachelab's watch %v, client-go's %v", wa, wb)
			}
			if wa != nil {
				ea, _ := take(t, wa, 100)
				eb, _ := take(t, wb, 100)
				wa.Stop()
				wb.Stop()
				if d := cmp.Diff(eb, ea); d != "" {
					t.Errorf("the events differ, cachelab (+) and client-go (-):\n%s", d)
				}
			}
			sameRequests(t, so, st)
		})
	}
}
