package consistencydetector_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	cgdetector "k8s.io/client-go/util/consistencydetector"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/cachelab/cachelab/consistencydetector"
)

// checkCase is one call of CheckDataConsistency, given alike to
// client-go's and cachelab's. Each builder makes fresh objects, so that
// neither side can see what the other did to them.
type checkCase struct {
	name      string
	identity  string
	rv        string
	opts      metav1.ListOptions
	retrieved func() []runtime.Object
	answers   func() []answer
	transform func(any) (any, error)
	cancelAt  int  // the LIST call (1-based) that ends the context as it is made
	cancelled bool // the context has ended before the check
}

// outcome is everything a check shows: the LISTs it sent, what it
// panicked with, and what it logged.
type outcome struct {
	Requests []metav1.ListOptions
	Panic    string
	Logs     []string
}

// checkCases cover V2-V5: when a LIST can be formed, the options it
// gets (the RV, the exact match, the limit), the retries, the transform
// and the comparison, and every way the check panics.
func checkCases() []checkCase {
	two := func() []runtime.Object { return objects(pod("a", "1"), pod("b", "2")) }
	three := func() []runtime.Object { return objects(pod("a", "1"), pod("b", "2"), pod("c", "3")) }
	listOf := func(pods ...*v1.Pod) func() []answer {
		return func() []answer { return []answer{listed(podList("9", pods...))} }
	}
	return []checkCase{
		{name: "consistent", identity: "r1", rv: "9", retrieved: two, answers: listOf(pod("a", "1"), pod("b", "2"))},
		{name: "consistent in another order", rv: "9", retrieved: two, answers: listOf(pod("b", "2"), pod("a", "1"))},
		{name: "other options are kept", rv: "9", opts: metav1.ListOptions{LabelSelector: "app=web", FieldSelector: "metadata.name=a", TimeoutSeconds: ptr.To[int64](39), AllowWatchBookmarks: true},
			retrieved: two, answers: listOf(pod("a", "1"), pod("b", "2"))},
		{name: "an object missing from what was retrieved", identity: "r1", rv: "9", retrieved: two, answers: listOf(pod("a", "1"), pod("b", "2"), pod("c", "3"))},
		{name: "an object retrieved that the LIST lacks", rv: "9", retrieved: three, answers: listOf(pod("a", "1"), pod("b", "2"))},
		{name: "one object at another resourceVersion", identity: "r1", rv: "9", retrieved: two, answers: listOf(pod("a", "1"), pod("b", "5"))},
		{name: "nothing on either side", rv: "9", retrieved: func() []runtime.Object { return nil }, answers: listOf()},
		{name: "RV 0 cannot form an exact LIST", rv: "0", retrieved: two, answers: listOf(pod("z", "1"))},
		{name: "RV empty is sent as it is", rv: "", retrieved: two, answers: listOf(pod("a", "1"), pod("b", "2"))},
		{name: "a continue token cannot form an exact LIST", rv: "9", opts: metav1.ListOptions{Continue: "token"}, retrieved: two, answers: listOf(pod("z", "1"))},
		{name: "RV 0 limit below the items: the limit goes", rv: "9", opts: metav1.ListOptions{ResourceVersion: "0", Limit: 2}, retrieved: three, answers: listOf(pod("a", "1"), pod("b", "2"), pod("c", "3"))},
		{name: "RV 0 limit equal to the items: the limit stays", rv: "9", opts: metav1.ListOptions{ResourceVersion: "0", Limit: 3}, retrieved: three, answers: listOf(pod("a", "1"), pod("b", "2"), pod("c", "3"))},
		{name: "RV 0 limit above the items: the limit stays", rv: "9", opts: metav1.ListOptions{ResourceVersion: "0", Limit: 5}, retrieved: three, answers: listOf(pod("a", "1"), pod("b", "2"), pod("c", "3"))},
		{name: "another RV's limit stays", rv: "9", opts: metav1.ListOptions{ResourceVersion: "7", Limit: 2}, retrieved: three, answers: listOf(pod("a", "1"), pod("b", "2"), pod("c", "3"))},
		{name: "a given match is replaced by Exact", rv: "9", opts: metav1.ListOptions{ResourceVersion: "7", ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}, retrieved: two, answers: listOf(pod("a", "1"), pod("b", "2"))},
		{name: "list errors, then an answer", identity: "r1", rv: "9", retrieved: two,
			answers: func() []answer {
				return []answer{failed("etcd is down"), failed("still down"), listed(podList("9", pod("a", "1"), pod("b", "2")))}
			}},
		{name: "the context ends while the LIST fails", identity: "r1", rv: "9", retrieved: two, cancelAt: 2,
			answers: func() []answer { return []answer{failed("etcd is down")} }},
		{name: "the context had ended: one try, then nothing", identity: "r1", rv: "9", retrieved: two, cancelled: true,
			answers: func() []answer { return []answer{failed("etcd is down")} }},
		{name: "the context had ended but the LIST answers", rv: "9", retrieved: two, cancelled: true, answers: listOf(pod("a", "1"))},
		{name: "transform applied to the listed items", rv: "9", transform: markTransformed,
			retrieved: func() []runtime.Object { return objects(marked(pod("a", "1")), marked(pod("b", "2"))) },
			answers:   listOf(pod("a", "1"), pod("b", "2"))},
		{name: "transform not applied to the retrieved items", rv: "9", transform: markTransformed, retrieved: two, answers: listOf(pod("a", "1"), pod("b", "2"))},
		{name: "transform fails", rv: "9", transform: func(any) (any, error) { return nil, errors.New("cannot transform") },
			retrieved: two, answers: listOf(pod("a", "1"))},
		{name: "transform returns a non-object", rv: "9", transform: func(any) (any, error) { return "text", nil },
			retrieved: two, answers: listOf(pod("a", "1"))},
		{name: "unstructured items", rv: "9",
			retrieved: func() []runtime.Object { return []runtime.Object{unstructuredPod("a"), unstructuredPod("b")} },
			answers: func() []answer {
				l := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "PodList"}}
				l.Items = []unstructured.Unstructured{*unstructuredPod("b"), *unstructuredPod("a")}
				return []answer{listed(l)}
			}},
		{name: "typed against unstructured", rv: "9",
			retrieved: func() []runtime.Object { return []runtime.Object{unstructuredPod("a")} }, answers: listOf(pod("a", "1"))},
		{name: "items without UIDs, same order", rv: "9", retrieved: anonymousPods(false), answers: anonymousList(false)},
		{name: "items without UIDs, reversed", rv: "9", retrieved: anonymousPods(true), answers: anonymousList(false)},
		{name: "a retrieved item without metadata", rv: "9", answers: listOf(pod("a", "1")),
			retrieved: func() []runtime.Object { return []runtime.Object{&metav1.Status{}} }},
		{name: "the LIST answers something that is not a list", rv: "9", retrieved: two,
			answers: func() []answer { return []answer{listed(pod("a", "1"))} }},
	}
}

func markTransformed(obj any) (any, error) {
	if p, ok := obj.(*v1.Pod); ok {
		return marked(p), nil
	}
	return obj, nil
}

func marked(p *v1.Pod) *v1.Pod {
	p = p.DeepCopy()
	p.Labels = map[string]string{"transformed": "true"}
	return p
}

// anonymousPods are 20 pods without UIDs, which a sort by UID leaves in
// the order sort.Sort's algorithm gives equal elements.
func anonymousPods(reversed bool) func() []runtime.Object {
	return func() []runtime.Object {
		var out []runtime.Object
		for i := range 20 {
			if reversed {
				i = 19 - i
			}
			out = append(out, anonymous(string(rune('a'+i))))
		}
		return out
	}
}

func anonymousList(reversed bool) func() []answer {
	return func() []answer {
		l := &v1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "9"}}
		for _, o := range anonymousPods(reversed)() {
			l.Items = append(l.Items, *o.(*v1.Pod))
		}
		return []answer{listed(l)}
	}
}

// TestCheckDataConsistencyAsClientGo gives each case to client-go's
// CheckDataConsistency and to cachelab's, and compares the LISTs each
// sent, what each panicked with and what each logged (V2, V3, V4, V5).
// A LIST that fails costs a second of real time, as in client-go, so the
// cases run in parallel, and each case's two sides at once.
func TestCheckDataConsistencyAsClientGo(t *testing.T) {
	for _, c := range checkCases() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var want, got outcome
			var wg sync.WaitGroup
			wg.Go(func() { want = c.run(clientGoCheck) })
			wg.Go(func() { got = c.run(cachelabCheck) })
			wg.Wait()
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("cachelab differs from client-go (-client-go +cachelab):\n%s", diff)
			}
		})
	}
}

// checkFunc is one implementation's CheckDataConsistency, as a test
// calls it.
type checkFunc func(ctx context.Context, c checkCase, l *lister)

func cachelabCheck(ctx context.Context, c checkCase, l *lister) {
	consistencydetector.CheckDataConsistency(ctx, c.identity, c.rv, l.List, c.transform, c.opts, c.retrieved)
}

func clientGoCheck(ctx context.Context, c checkCase, l *lister) {
	cgdetector.CheckDataConsistency(ctx, c.identity, c.rv, l.List, c.transform, c.opts, c.retrieved)
}

// run plays the case on one implementation.
func (c checkCase) run(check checkFunc) outcome {
	logger, logs := newLogger()
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logger))
	defer cancel()
	if c.cancelled {
		cancel()
	}
	l := &lister{answers: c.answers(), cancelAt: c.cancelAt, cancel: cancel}
	p := panicked(func() { check(ctx, c, l) })
	return outcome{Requests: l.requests, Panic: p, Logs: logs()}
}
