package listwatch_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/cachelab/cachelab/apistorage"
	"github.com/cachelab/cachelab/internal/testdeadline"
	"github.com/cachelab/cachelab/listwatch"
)

// The differential tests send the same LIST and WATCH requests to two
// kube-apiservers without a watch cache over ONE etcd: listwatch's
// (cachelab's, from scratch) and apistorage's (k8s.io/apiserver v0.37.2's
// etcd3 store behind a copy of its REST handler and generic registry).
// Every answer, item, continue token, error Status and watch event is
// compared with go-cmp. Each side has its own etcd client, as two
// kube-apiservers would, so that a progress request one side makes
// (RequestProgress) is answered on that side's watches only.
//
//	            ┌── client A ── listwatch.ListerWatcher ──┐
//	Writer ──► etcd                                       ├── same request, cmp.Diff
//	            └── client B ── apistorage (Cache: false) ─┘

// lister is what both ListerWatchers offer a test.
type lister interface {
	ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error)
	WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
	RequestProgress(ctx context.Context) error
}

// sides is one etcd served by both implementations.
type sides struct {
	etcd   *listwatch.Embedded
	res    listwatch.Resource
	w      *listwatch.Writer
	clock  *clocktesting.FakeClock
	ours   *listwatch.ListerWatcher
	theirs *apistorage.ListerWatcher
	tap    *tap    // what etcd sent listwatch's watches
	open   []*pair // watches settle reads
}

var diffEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// newSides starts an etcd for one test and both servers over it.
func newSides(t testing.TB) *sides {
	t.Helper()
	e := startEtcd(t)
	return serveBoth(t, e, listwatch.Pods, connectTo(context.Background(), t, e), connectTo(context.Background(), t, e))
}

// serveBoth builds both servers for res over e, each on its own client.
func serveBoth(t testing.TB, e *listwatch.Embedded, res listwatch.Resource, ours, theirs *clientv3.Client) *sides {
	t.Helper()
	clk := clocktesting.NewFakeClock(diffEpoch)
	ctx := testdeadline.Context(t)
	srv, err := apistorage.New(ctx, theirs, res, apistorage.Options{Cache: false, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	n := 0
	w := listwatch.NewWriter(e.Client(), res, listwatch.WriterOptions{
		NewUID: func() types.UID { n++; return types.UID(fmt.Sprintf("uid-%d", n)) },
		Now:    func() time.Time { return diffEpoch },
	})
	tp := &tap{Watcher: ours.Watcher}
	ours.Watcher = tp
	return &sides{etcd: e, res: res, w: w, clock: clk, tap: tp,
		ours:   listwatch.NewListerWatcher(ours, res, listwatch.Options{Clock: clk}),
		theirs: srv.ListerWatcher("")}
}

// in returns both sides' ListerWatchers for one namespace ("" for all).
func (s *sides) in(ns string) (ours, theirs lister) {
	return s.ours.WithNamespace(ns), s.theirs.WithNamespace(ns)
}

func (s *sides) rev(t testing.TB) int64 {
	t.Helper()
	r, err := s.etcd.Revision(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// answer is what a request got, in a form go-cmp can compare whole: the
// object, or the error's full Status (or its text, for an error that has
// no Status), and the continue token decoded, so that a diff shows which
// of its fields differ and not only that the base64 does.
type answer struct {
	List   *unstructured.UnstructuredList
	Status *metav1.Status
	Err    string
	Token  map[string]any
}

func answerOf(obj runtime.Object, err error) answer {
	var a answer
	var status apierrors.APIStatus
	switch {
	case errors.As(err, &status):
		st := status.Status()
		a.Status = &st
		a.Token = decodeToken(st.Continue)
	case err != nil:
		a.Err = err.Error()
	case obj != nil:
		a.List = obj.(*unstructured.UnstructuredList)
		a.Token = decodeToken(a.List.GetContinue())
	}
	return a
}

// decodeToken opens a continue token (base64url JSON, k8s.io/apiserver's
// storage/continue.go); nil for none.
func decodeToken(token string) map[string]any {
	if token == "" {
		return nil
	}
	out := map[string]any{}
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return map[string]any{"undecodable": err.Error()}
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return map[string]any{"undecodable": err.Error()}
	}
	return out
}

// listBoth sends one LIST to both sides and reports any difference; it
// returns our answer, for a test to continue from (its continue token).
func listBoth(t testing.TB, ours, theirs lister, opts metav1.ListOptions) answer {
	t.Helper()
	ctx := context.Background()
	a, b := answerOf(ours.ListWithContext(ctx, opts)), answerOf(theirs.ListWithContext(ctx, opts))
	dropEmptyContinue(b.List)
	if d := cmp.Diff(b, a); d != "" {
		t.Errorf("LIST %s: listwatch differs from kube-apiserver's storage (-apiserver +listwatch):\n%s", describeOpts(opts), d)
	}
	return a
}

// dropEmptyContinue removes `continue: ""` from a complete list's
// metadata. The etcd3 store sets the token on every list it returns
// (APIObjectVersioner.UpdateList calls SetContinue, even with ""), and
// on an UnstructuredList that makes a key; a PodList, which is what a pod
// client gets over the wire, has omitempty there, so no key. listwatch
// answers as for pods. Only the empty value is dropped: a real token is
// compared.
func dropEmptyContinue(l *unstructured.UnstructuredList) {
	if l == nil {
		return
	}
	if md, ok := l.Object["metadata"].(map[string]any); ok && md["continue"] == "" {
		delete(md, "continue")
	}
}

// describeOpts renders the options a request set, for messages and
// for reading a fuzzer's failing sequence.
func describeOpts(o metav1.ListOptions) string {
	b, _ := json.Marshal(o)
	return string(b)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
