package wire_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/cachelab/cachelab/internal/apiworld"
	"github.com/cachelab/cachelab/kubeapiserver"
)

func ptr[T any](v T) *T { return &v }

// H1 H6 E6: a WATCH from a resourceVersion: the events of the writes after
// it, in all namespaces and in one, from the cache and from etcd.
func TestWireWatch(t *testing.T) {
	for _, cache := range []bool{true, false} {
		t.Run(map[bool]string{true: "watchcache", false: "etcd"}[cache], func(t *testing.T) {
			wd := apiworld.Start(t, cache)
			threePods(t, wd)
			all := newPair(t, wd.Server, "")
			one := newPair(t, wd.Server, "ns0")
			opts := metav1.ListOptions{ResourceVersion: "4", TimeoutSeconds: ptr(int64(300)), AllowWatchBookmarks: true}
			a1, b1 := all.watch(t, opts)
			a2, b2 := one.watch(t, opts)
			wd.Create(t, apiworld.Pod("ns1", "d", nil), apiworld.Pod("ns0", "e", nil))
			u, err := wd.Writer.Get(context.Background(), "ns0", "a")
			if err != nil {
				t.Fatal(err)
			}
			u.SetLabels(map[string]string{"app": "cache"})
			if _, err := wd.Writer.Update(context.Background(), u); err != nil {
				t.Fatal(err)
			}
			sameEvents(t, a1, b1, 3)
			sameEvents(t, a2, b2, 2)
			all.requests(t)
		})
	}
}

// E9 E11 H6: watch-list: a WATCH that asks for its initial events gets every
// object as ADDED and then a BOOKMARK marked as their end, on the same
// stream (E11); with the feature off it is refused with 422.
func TestWireWatchList(t *testing.T) {
	wd := apiworld.Start(t, true)
	threePods(t, wd)
	p := newPair(t, wd.Server, "")
	opts := metav1.ListOptions{SendInitialEvents: ptr(true), AllowWatchBookmarks: true,
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, TimeoutSeconds: ptr(int64(300))}
	a, b := p.watch(t, opts)
	events := sameEvents(t, a, b, 4)
	if last := events[len(events)-1]; last.Type != watch.Bookmark {
		t.Errorf("the fourth event is %s; the test expects the initial events' bookmark", last.Type)
	}
	wd.Storage.SetWatchListFeature(false)
	p.watch(t, opts)
	if got := statuses(p.requests(t)); cmp.Diff([]int{200, 422}, got) != "" {
		t.Errorf("statuses %v; the test expects the second watch-list refused", got)
	}
}

// E8 E10 H7: the watch cache's own bookmarks (about once a minute of its
// clock, to a watch that allows them), and the server ending a watch at
// its timeoutSeconds, on the scenario's clock, with a bookmark just
// before.
func TestWireBookmarksAndTimeout(t *testing.T) {
	wd := apiworld.Start(t, true)
	threePods(t, wd)
	p := newPair(t, wd.Server, "")
	opts := metav1.ListOptions{ResourceVersion: "4", TimeoutSeconds: ptr(int64(90)), AllowWatchBookmarks: true}
	a, b := p.watch(t, opts)
	wd.Create(t, apiworld.Pod("ns0", "d", nil)) // the cache moves past the watches' start
	sameEvents(t, a, b, 1)
	wd.Step(t, 61*time.Second)
	if events := sameEvents(t, a, b, 1); events[0].Type != watch.Bookmark {
		t.Errorf("after a minute: %v; the test expects a bookmark", events)
	}
	wd.Step(t, 30*time.Second)
	events := sameEvents(t, a, b, 10) // until the server ends both
	if len(events) > 2 {
		t.Errorf("after the timeout, %d events: %v", len(events), events)
	}
	p.requests(t)
}

// E7 H6: a WATCH from a resourceVersion etcd has compacted: from etcd, the
// server answers 200 and then an ERROR event with 410 Expired; the
// cache, which kept those events, serves them.
func TestWireWatchExpired(t *testing.T) {
	for _, cache := range []bool{true, false} {
		t.Run(map[bool]string{true: "watchcache", false: "etcd"}[cache], func(t *testing.T) {
			wd := apiworld.Start(t, cache)
			threePods(t, wd)
			if err := wd.Etcd.Compact(context.Background(), 4); err != nil {
				t.Fatal(err)
			}
			p := newPair(t, wd.Server, "")
			a, b := p.watch(t, metav1.ListOptions{ResourceVersion: "2", TimeoutSeconds: ptr(int64(300))})
			events := sameEvents(t, a, b, 2)
			if !cache && (len(events) == 0 || events[0].Type != watch.Error) {
				t.Errorf("events %v; the test expects an ERROR", events)
			}
			p.requests(t)
		})
	}
}

// H3 H4 H6: 429 and 500 on a WATCH: with Retry-After the client tries again
// after it; without, the status is the watch's error.
func TestWireWatchRefused(t *testing.T) {
	wd := apiworld.Start(t, true)
	threePods(t, wd)
	p := newPair(t, wd.Server, "")
	opts := metav1.ListOptions{ResourceVersion: "4", TimeoutSeconds: ptr(int64(300))}
	for _, f := range []kubeapiserver.Fault{
		{Status: http.StatusTooManyRequests, RetryAfter: 1},
		{Status: http.StatusTooManyRequests},
		{Status: http.StatusInternalServerError},
		{Status: http.StatusGone},
	} {
		for _, user := range []string{ours, theirs} {
			wd.Server.FailNext(user, "watch", f)
		}
		p.watch(t, opts)
	}
	want := []int{429, 200, 429, 500, 410}
	if got := statuses(p.requests(t)); cmp.Diff(want, got) != "" {
		t.Errorf("statuses %v, want %v", got, want)
	}
}
