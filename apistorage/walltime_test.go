package apistorage_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/cachelab/cachelab/internal/goroutines"
)

// The watch cache runs no loop on the wall clock that can change what a
// client is answered (walltime.go): kube-apiserver's cache consistency
// checker, on by default since 1.34, compares the cache with etcd every
// 5 to 7.5 minutes of wall time and, failing, sends LISTs to etcd. In a
// simulation a person's pause at a --step prompt would decide that, and
// its wait loop, once it has run, kept the cache from ever counting as
// quiescent (issue 27, case 3). C8.
func TestNoWallClockConsistencyChecker(t *testing.T) {
	wd := newWorld(t)
	s := wd.server(t, true)
	for _, g := range goroutines.All() {
		if strings.Contains(g, "cacher/consistency.(*Checker).Run") || strings.Contains(g, "cacher/consistency.Checker.Run") {
			t.Fatalf("kube-apiserver's cache consistency checker runs, on the wall clock:\n%s", g)
		}
	}
	if !s.Cached() {
		t.Fatal("the server has no watch cache")
	}
}

// A watch whose client takes no event while the cacher dispatches a
// burst is not closed by the cacher's wall-clock budget for blocked
// watchers (cacher.go's dispatchEvent, time_budget.go: 50 ms a second, at
// most 100 ms, and none at all for a fresh cacher): the dispatcher waits
// up to the widened budget, and the client, reading at its own pace once
// the writes are done, gets every event. With kube-apiserver's budget the
// watch was closed after 11 events, and in the simulator one informer
// got a re-watch the other did not. C9.
func TestBurstIsNotCutByTheWallClock(t *testing.T) {
	wd := newWorld(t)
	s := wd.server(t, true)
	lw := s.ListerWatcher("")
	waitFor(t, func() bool { return s.CacheCaughtUp(1) })
	w, err := lw.WatchWithContext(context.Background(), metav1.ListOptions{ResourceVersion: "1"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	const n = 300
	for i := range n {
		wd.create(t, "ns0", fmt.Sprintf("p%03d", i)) // nobody reads the watch meanwhile
	}
	for i := range n {
		e, ok := <-w.ResultChan()
		if !ok {
			t.Fatalf("the watch was closed after %d of %d events", i, n)
		}
		if u := e.Object.(*unstructured.Unstructured); e.Type != watch.Added || u.GetName() != fmt.Sprintf("p%03d", i) {
			t.Fatalf("event %d: %s %s, want ADDED p%03d", i, e.Type, u.GetName(), i)
		}
	}
}
