package watchcache_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/cachelab/cachelab/apistorage"
	"github.com/cachelab/cachelab/listwatch"
)

// server is kube-apiserver's storage for pods, in the test process: an
// embedded etcd (a temporary directory, loopback ports the kernel
// picks), and in front of it k8s.io/apiserver v0.37.2's watch cache
// (package apistorage), on a fake clock that only the cell moves.
type server struct {
	etcd  *listwatch.Embedded
	pods  *listwatch.Writer
	clock *clocktesting.FakeClock
	api   *apistorage.Server
}

// newServer starts etcd (at revision 1, empty) and a watch cache that
// has listed it and is ready.
func newServer(ctx context.Context) *server {
	e, err := listwatch.StartEmbedded(ctx, listwatch.EmbeddedOptions{})
	if err != nil {
		panic(err)
	}
	s := &server{etcd: e, pods: listwatch.NewWriter(e.Client(), listwatch.Pods, listwatch.WriterOptions{}),
		clock: clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))}
	s.api = apiserver(ctx, s)
	return s
}

// apiserver starts kube-apiserver's storage for pods over s's etcd, with
// the watch cache in front, its timers on s's clock; it returns once the
// cache has listed etcd. A second one is a second kube-apiserver of the
// same cluster, with a cache of its own.
func apiserver(ctx context.Context, s *server) *apistorage.Server {
	api, err := apistorage.New(ctx, s.etcd.Client(), listwatch.Pods, apistorage.Options{Cache: true, Clock: s.clock})
	if err != nil {
		panic(err)
	}
	return api
}

func (s *server) Close() {
	s.api.Close()
	_ = s.etcd.Close()
}

// create writes the pod "namespace/name" to etcd.
func (s *server) create(ctx context.Context, key string) {
	ns, name, _ := strings.Cut(key, "/")
	p := &unstructured.Unstructured{}
	p.SetAPIVersion("v1")
	p.SetKind("Pod")
	p.SetNamespace(ns)
	p.SetName(name)
	if _, err := s.pods.Create(ctx, p); err != nil {
		panic(err)
	}
}

func (s *server) delete(ctx context.Context, key string) {
	ns, name, _ := strings.Cut(key, "/")
	if _, err := s.pods.Delete(ctx, ns, name, listwatch.Preconditions{}); err != nil {
		panic(err)
	}
}

// caughtUp waits until api's cache has taken in etcd's current revision
// and is ready; a held cache, only until it has taken in all it will.
func caughtUp(ctx context.Context, s *server, api *apistorage.Server, held bool) {
	rev, err := s.etcd.Revision(ctx)
	if err != nil {
		panic(err)
	}
	waitFor(func() bool { return api.CacheCaughtUp(uint64(rev)) && (held || api.Ready()) })
}

// waitFor waits until cond holds, looking every millisecond: a wait for
// something the cache says, not a guess at how long it takes. The 10 s
// limit only guards against a hang.
func waitFor(cond func() bool) {
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			panic("waited 10s for the watch cache")
		}
		<-time.After(time.Millisecond)
	}
}

// list sends a LIST to api and renders who answered and what: "cache:
// rv 4, 3 items". While the cache makes the LIST wait (it is behind
// etcd), the server's clock moves a second at a time, and the answer
// says how long it waited.
func list(ctx context.Context, s *server, api *apistorage.Server, opts metav1.ListOptions) string {
	obj, source, waited, err := send(ctx, s, api, opts)
	out := source + ": "
	if err != nil {
		out += status(err)
	} else {
		l := obj.(*unstructured.UnstructuredList)
		out += fmt.Sprintf("rv %s, %s", l.GetResourceVersion(), count(len(l.Items)))
	}
	if waited > 0 {
		out += fmt.Sprintf(" (after %v of the server's clock)", waited)
	}
	return out
}

// cacheWait is how long kube-apiserver's watch cache makes a request
// wait for it to catch up, on its clock (watch_cache.go's blockTimeout):
// then a LIST falls back to etcd and a WATCH fails. The helpers move the
// clock a second at a time up to it, and no further: once the wait is
// over, the waiting goroutine still looks stalled until it is scheduled,
// and a move then would be one second too many, on a busy machine only
// (CI saw "after 4s" once).
const cacheWait = 3 * time.Second

// send sends a LIST to api, moving the clock on while the cache makes it
// wait, and returns the answer, where it came from and how long it
// waited.
func send(ctx context.Context, s *server, api *apistorage.Server, opts metav1.ListOptions) (runtime.Object, string, time.Duration, error) {
	ctx, src := apistorage.WithSource(ctx)
	type result struct {
		obj runtime.Object
		err error
	}
	done := make(chan result, 1)
	go func() {
		obj, err := api.ListerWatcher("").ListWithContext(ctx, opts)
		done <- result{obj, err}
	}()
	start := s.clock.Now()
	for {
		select {
		case r := <-done:
			return r.obj, src.String(), s.clock.Since(start), r.err
		case <-time.After(time.Millisecond):
			if s.clock.Since(start) < cacheWait && api.Stalled() {
				s.clock.Step(time.Second)
			}
		}
	}
}

// request renders a LIST's options: `rv="0" limit=2`.
func request(o metav1.ListOptions) string {
	s := fmt.Sprintf("rv=%q", o.ResourceVersion)
	if o.ResourceVersionMatch != "" {
		s += " match=" + string(o.ResourceVersionMatch)
	}
	if o.Limit > 0 {
		s += fmt.Sprintf(" limit=%d", o.Limit)
	}
	if o.Continue != "" {
		s += " continue=<page 1's token>"
	}
	return s
}

// names renders a list's items as "[shop/a shop/b]".
func names(list runtime.Object) []string {
	var out []string
	_ = meta.EachListItem(list, func(obj runtime.Object) error {
		m, _ := meta.Accessor(obj)
		out = append(out, m.GetNamespace()+"/"+m.GetName())
		return nil
	})
	return out
}

func count(n int) string {
	if n == 1 {
		return "1 item"
	}
	return fmt.Sprintf("%d items", n)
}

// status renders an API error as "429 TooManyRequests: message".
func status(err error) string {
	var s apierrors.APIStatus
	if !errors.As(err, &s) {
		return fmt.Sprintf("not an API error: %v", err)
	}
	st := s.Status()
	return fmt.Sprintf("%d %s: %s", st.Code, st.Reason, st.Message)
}

// event renders a watch event: "ADDED shop/a@2", "BOOKMARK @4",
// "ERROR 410 Expired: too old resource version: 2 (12)".
func event(e watch.Event) string {
	switch o := e.Object.(type) {
	case *metav1.Status:
		return fmt.Sprintf("%s %d %s: %s", e.Type, o.Code, o.Reason, o.Message)
	case *unstructured.Unstructured:
		if e.Type == watch.Bookmark {
			return "BOOKMARK @" + o.GetResourceVersion()
		}
		return fmt.Sprintf("%s %s/%s@%s", e.Type, o.GetNamespace(), o.GetName(), o.GetResourceVersion())
	}
	return fmt.Sprintf("%s %T", e.Type, e.Object)
}

// watch opens a WATCH on api, moving the server's clock on while the
// cache makes it wait (a watch-list at "" while it is behind etcd).
func (s *server) watch(ctx context.Context, api *apistorage.Server, opts metav1.ListOptions) (watch.Interface, error) {
	type result struct {
		w   watch.Interface
		err error
	}
	done := make(chan result, 1)
	go func() {
		w, err := api.ListerWatcher("").WatchWithContext(ctx, opts)
		done <- result{w, err}
	}()
	start := s.clock.Now()
	for {
		select {
		case r := <-done:
			return r.w, r.err
		case <-time.After(time.Millisecond):
			if s.clock.Since(start) < cacheWait && api.Stalled() {
				s.clock.Step(time.Second)
			}
		}
	}
}

// next reads a watch's next event. The 10 s limit only guards against a
// hang: a cell that is right never waits that long.
func next(w watch.Interface) string {
	select {
	case e, open := <-w.ResultChan():
		if !open {
			return "(the watch is closed)"
		}
		return event(e)
	case <-time.After(10 * time.Second):
		return "(no event within 10s)"
	}
}

// tick moves the server's clock on by one second, waits until the cache
// has done all it does for that second (apistorage's Quiescent), and
// returns the events w got meanwhile, each stamped with the clock's time
// since start.
func tick(s *server, w watch.Interface, start time.Time) []string {
	s.clock.Step(time.Second)
	var got []string
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case e := <-w.ResultChan():
			got = append(got, fmt.Sprintf("%v: %s", s.clock.Since(start), event(e)))
			continue
		default:
		}
		if s.api.Quiescent() {
			return got
		}
		<-time.After(time.Millisecond)
	}
	panic("the watch cache did not settle within 10s")
}

// ticksUntil ticks the clock a second at a time until d has passed since
// start, and returns the events w got.
func (s *server) ticksUntil(w watch.Interface, start time.Time, d time.Duration) []string {
	got := []string{}
	for s.clock.Since(start) < d {
		got = append(got, tick(s, w, start)...)
	}
	return got
}
