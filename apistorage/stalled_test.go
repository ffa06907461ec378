package apistorage_test

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cachelab/cachelab/apistorage"
)

// A watch-list waiting in a held cache stalls its own server, and only
// it: another server in the process, with no request of its own waiting,
// is not stalled by it, nor does it make the first look stalled when its
// own request waits too (the fuzzer runs two simulations in one process).
func TestStalledCountsItsOwnRequests(t *testing.T) {
	wd := newWorld(t)
	wd.create(t, "ns0", "a")
	a, b := wd.server(t, true), wd.server(t, true)
	waitFor(t, func() bool { return a.CacheCaughtUp(2) && b.CacheCaughtUp(2) })
	a.HoldCache()
	b.HoldCache()
	wd.create(t, "ns0", "b")
	tr := true
	watchList := func(s *apistorage.Server) {
		w, err := s.ListerWatcher("").WatchWithContext(context.Background(), metav1.ListOptions{SendInitialEvents: &tr,
			ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true})
		if err == nil {
			w.Stop()
		}
	}
	done := make(chan struct{}, 2)
	go func() { watchList(a); done <- struct{}{} }()
	waitFor(t, a.Stalled)
	if b.Stalled() {
		t.Error("a server with no request in progress is stalled by another's")
	}
	go func() { watchList(b); done <- struct{}{} }()
	waitFor(t, b.Stalled)
	if !a.Stalled() || !apistorage.Stalled(a, b) {
		t.Error("a second server's waiting request hides the first's")
	}
	a.ReleaseCache()
	b.ReleaseCache()
	wd.clock.Step(time.Minute) // the waits' own 3 s timers end too
	for range 2 {
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("a waiting watch-list did not end once its cache was released")
		}
	}
}
