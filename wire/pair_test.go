package wire_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/cachelab/cachelab/apistorage"
	"github.com/cachelab/cachelab/internal/apiworld"
	"github.com/cachelab/cachelab/internal/dynclient"
	"github.com/cachelab/cachelab/internal/testdeadline"
	"github.com/cachelab/cachelab/kubeapiserver"
	"github.com/cachelab/cachelab/listwatch"
	"github.com/cachelab/cachelab/wire"
)

// The two users the server tells apart: each side of a comparison
// authenticates with a client certificate of its own, so the server's
// log says which side sent what.
const (
	ours   = "cachelab"
	theirs = "client-go"
)

// lister is what both sides offer: a LIST and a WATCH of pods.
type lister interface {
	ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error)
	WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// pair is cachelab's wire ListerWatcher and client-go's dynamic client,
// as dynamicinformer uses it, on the same server and namespace.
type pair struct {
	srv         *kubeapiserver.Server
	ours, their lister
}

var pods = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

func newPair(t *testing.T, srv *kubeapiserver.Server, namespace string) pair {
	t.Helper()
	return newPairWith(t, srv, namespace, 0)
}

// newPairWith is newPair with both clients' rate limit (QPS) set: 0 for
// the default (5 a second, a burst of 10), negative for none.
func newPairWith(t testing.TB, srv *kubeapiserver.Server, namespace string, qps float32) pair {
	t.Helper()
	mine, err := srv.Client(ours)
	if err != nil {
		t.Fatal(err)
	}
	tlsc, err := mine.TLS()
	if err != nil {
		t.Fatal(err)
	}
	lw, err := wire.NewListerWatcher(wire.Config{Host: mine.Host, TLS: tlsc, QPS: qps}, listwatch.Pods, wire.Options{Namespace: namespace})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(lw.Close)
	return pair{srv: srv, ours: lw, their: clientGo(t, srv, namespace, qps)}
}

// clientGo is client-go's dynamic client for pods in namespace, as its
// dynamic informer lists and watches through it, on a transport of its
// own whose connections the test closes.
func clientGo(t testing.TB, srv *kubeapiserver.Server, namespace string, qps float32) lister {
	t.Helper()
	cc, err := srv.Client(theirs)
	if err != nil {
		t.Fatal(err)
	}
	cfg := cc.REST()
	cfg.QPS = qps
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { utilnet.CloseIdleConnectionsFor(hc.Transport) })
	dyn, err := dynamic.NewForConfigAndClient(cfg, hc)
	if err != nil {
		t.Fatal(err)
	}
	return dynclient.ListWatch(dyn.Resource(pods).Namespace(namespace))
}

// outcome is what a call came to, in a form both sides can be compared
// in: the object, or the error's text and, for an API error, its Status.
type outcome struct {
	Obj    runtime.Object
	Err    string
	Status *metav1.Status
}

func outcomeOf(obj runtime.Object, err error) outcome {
	if err == nil {
		return outcome{Obj: obj}
	}
	o := outcome{Err: err.Error()}
	var se apierrors.APIStatus
	if errors.As(err, &se) {
		st := se.Status()
		o.Status = &st
	}
	return o
}

// list sends the same LIST from both sides and compares what each got.
func (p pair) list(t *testing.T, opts metav1.ListOptions) outcome {
	t.Helper()
	ctx := context.Background()
	a := outcomeOf(p.ours.ListWithContext(ctx, opts))
	b := outcomeOf(p.their.ListWithContext(ctx, opts))
	if d := cmp.Diff(b, a); d != "" {
		t.Errorf("LIST %+v: cachelab (+) and client-go (-) differ:\n%s", opts, d)
	}
	return a
}

// requests compares the requests each side sent (method, path and query,
// and the status each got), from the server's log, and returns ours.
func (p pair) requests(t *testing.T) []kubeapiserver.Request {
	t.Helper()
	a, b := p.srv.Requests(ours), p.srv.Requests(theirs)
	for _, rs := range [][]kubeapiserver.Request{a, b} {
		for i := range rs {
			rs[i].User = ""
			rs[i].From = apistorage.Source{} // where the storage answered from: the requests are what is compared
		}
	}
	if d := cmp.Diff(b, a); d != "" {
		t.Errorf("the requests on the wire differ, cachelab (+) and client-go (-):\n%s", d)
	}
	return a
}

// watching is one side's open watch.
type watching struct {
	w   watch.Interface
	err error
}

// watch opens the same WATCH on both sides; the caller stops them.
func (p pair) watch(t *testing.T, opts metav1.ListOptions) (ours, theirs watching) {
	t.Helper()
	ctx := context.Background()
	a, aerr := p.ours.WatchWithContext(ctx, opts)
	b, berr := p.their.WatchWithContext(ctx, opts)
	if d := cmp.Diff(outcomeOf(nil, berr), outcomeOf(nil, aerr)); d != "" {
		t.Errorf("WATCH %+v: cachelab (+) and client-go (-) differ:\n%s", opts, d)
	}
	t.Cleanup(func() {
		for _, w := range []watch.Interface{a, b} {
			if w != nil {
				w.Stop()
			}
		}
	})
	return watching{a, aerr}, watching{b, berr}
}

// take reads n events from a watch, or fewer if it closes; it fails the
// test if they have not come by the test binary's deadline (package
// testdeadline: how soon they come grows with the machine's load).
func take(t *testing.T, w watch.Interface, n int) (events []watch.Event, closed bool) {
	t.Helper()
	deadline := testdeadline.Context(t)
	for len(events) < n {
		select {
		case e, ok := <-w.ResultChan():
			if !ok {
				return events, true
			}
			events = append(events, e)
		case <-deadline.Done():
			t.Fatalf("at the test binary's deadline, %d of %d events: %v", len(events), n, events)
		}
	}
	return events, false
}

// sameEvents takes n events from each side's watch and compares them,
// and whether each watch closed.
func sameEvents(t *testing.T, a, b watching, n int) []watch.Event {
	t.Helper()
	if a.w == nil || b.w == nil {
		t.Fatalf("a watch did not open: cachelab %v, client-go %v", a.err, b.err)
	}
	ea, ca := take(t, a.w, n)
	eb, cb := take(t, b.w, n)
	if d := cmp.Diff(eb, ea); d != "" {
		t.Errorf("the watch events differ, cachelab (+) and client-go (-):\n%s", d)
	}
	if ca != cb {
		t.Errorf("cachelab's watch closed: %v; client-go's: %v", ca, cb)
	}
	return ea
}

// status is a log line's status, for building expectations.
func statuses(rs []kubeapiserver.Request) []int {
	var out []int
	for _, r := range rs {
		out = append(out, r.Status)
	}
	return out
}

var _ = http.StatusOK
var _ = apiworld.Epoch
