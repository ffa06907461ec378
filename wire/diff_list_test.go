package wire_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cachelab/cachelab/internal/apiworld"
	"github.com/cachelab/cachelab/kubeapiserver"
)

// Every test here sends the same requests from cachelab's wire
// ListerWatcher and from client-go's dynamic client to one in-process
// kube-apiserver, and compares, with go-cmp, the requests the server
// received (method, path, query, the status it answered) and what each
// client made of the answers (the decoded list, or the error and its
// Status). Nothing is compared with a hand-written expectation.

// threePods is ns0/a (app=web), ns0/b (app=db), ns1/c (app=web).
func threePods(t *testing.T, wd *apiworld.World) {
	wd.Create(t,
		apiworld.Pod("ns0", "a", map[string]string{"app": "web"}),
		apiworld.Pod("ns0", "b", map[string]string{"app": "db"}),
		apiworld.Pod("ns1", "c", map[string]string{"app": "web"}))
}

// H1 H2: a LIST's URL, query and decoded list, in all namespaces and in
// one, from the watch cache (resourceVersion 0) and from etcd (a
// consistent read, resourceVersion ""), with and without the cache.
func TestWireList(t *testing.T) {
	for _, cache := range []bool{true, false} {
		t.Run(map[bool]string{true: "watchcache", false: "etcd"}[cache], func(t *testing.T) {
			wd := apiworld.Start(t, cache)
			threePods(t, wd)
			for _, ns := range []string{"", "ns0"} {
				p := newPair(t, wd.Server, ns)
				for _, opts := range []metav1.ListOptions{
					{},
					{ResourceVersion: "0"},
					{ResourceVersion: "0", Limit: 500},
					{ResourceVersion: "3", ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan},
					{ResourceVersion: "3", ResourceVersionMatch: metav1.ResourceVersionMatchExact},
				} {
					p.list(t, opts)
				}
			}
			newPair(t, wd.Server, "").requests(t)
		})
	}
}

// H1 H7 (E16): selectors on the wire: labels, the fields every resource has, and
// a field pods have elsewhere that this server does not index (400).
func TestWireSelectors(t *testing.T) {
	wd := apiworld.Start(t, true)
	threePods(t, wd)
	p := newPair(t, wd.Server, "")
	for _, opts := range []metav1.ListOptions{
		{LabelSelector: "app=web"},
		{LabelSelector: "app in (web,db),app!=db"},
		{FieldSelector: "metadata.namespace=ns1"},
		{FieldSelector: "metadata.name=a,metadata.namespace=ns0"},
		{FieldSelector: "spec.nodeName=node-1"},
		{LabelSelector: "app==="},
	} {
		p.list(t, opts)
	}
	rs := p.requests(t)
	if got := statuses(rs); cmp.Diff([]int{200, 200, 200, 200, 400, 400}, got) != "" {
		t.Errorf("statuses %v; the test expects two refusals (the unknown field, the bad label selector)", got)
	}
}

// H1 E4: a LIST in pages: limit, the continue token, the remaining count,
// each page read at the first page's resourceVersion (E4), from etcd and
// from the cache.
func TestWirePagedList(t *testing.T) {
	for _, rv := range []string{"", "0"} {
		t.Run("rv="+rv, func(t *testing.T) {
			wd := apiworld.Start(t, true)
			threePods(t, wd)
			p := newPair(t, wd.Server, "")
			opts := metav1.ListOptions{ResourceVersion: rv, Limit: 1}
			for page := 0; page < 4; page++ {
				got := p.list(t, opts)
				l, ok := got.Obj.(*unstructured.UnstructuredList)
				if !ok || l.GetContinue() == "" {
					break
				}
				if page == 0 {
					wd.Create(t, apiworld.Pod("ns0", "late", nil)) // after the first page: not in the list
				}
				opts = metav1.ListOptions{Limit: 1, Continue: l.GetContinue()}
			}
			p.requests(t)
		})
	}
}

// H3 E4: a LIST whose continue token etcd has compacted away: 410 Expired
// with a token to go on inconsistently (E4), and a LIST at an exact
// resourceVersion that has been compacted (410).
func TestWireExpired(t *testing.T) {
	wd := apiworld.Start(t, false)
	threePods(t, wd)
	p := newPair(t, wd.Server, "")
	first := p.list(t, metav1.ListOptions{Limit: 1})
	l := first.Obj.(*unstructured.UnstructuredList)
	wd.Create(t, apiworld.Pod("ns2", "d", nil))
	if err := wd.Etcd.Compact(context.Background(), 5); err != nil {
		t.Fatal(err)
	}
	p.list(t, metav1.ListOptions{Limit: 1, Continue: l.GetContinue()})
	p.list(t, metav1.ListOptions{ResourceVersion: "2", ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	if got := statuses(p.requests(t)); cmp.Diff([]int{200, 410, 410}, got) != "" {
		t.Errorf("statuses %v; the test expects 410 for both", got)
	}
}

// H3 H4 H7: 429 and 500 as a server's filters send them. With Retry-After,
// the client waits that long and tries again (client-go's REST client
// does, up to 10 times); without it, the status is the error: a 429 from
// max-in-flight is plain text, a 500 a Status.
func TestWireRetryAfter(t *testing.T) {
	wd := apiworld.Start(t, true)
	threePods(t, wd)
	p := newPair(t, wd.Server, "")
	for _, f := range []kubeapiserver.Fault{
		{Status: http.StatusTooManyRequests, RetryAfter: 1},
		{Status: http.StatusTooManyRequests},
		{Status: http.StatusInternalServerError, RetryAfter: 1},
		{Status: http.StatusInternalServerError},
		{Status: http.StatusServiceUnavailable},
	} {
		for _, user := range []string{ours, theirs} {
			wd.Server.FailNext(user, "list", f)
		}
		p.list(t, metav1.ListOptions{ResourceVersion: "0"})
	}
	want := []int{429, 200, 429, 500, 200, 500, 503}
	if got := statuses(p.requests(t)); cmp.Diff(want, got) != "" {
		t.Errorf("statuses %v, want %v", got, want)
	}
}
