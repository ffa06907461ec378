package apistorage_test

import (
	"context"
	"runtime/pprof"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cachelab/cachelab/apistorage"
	"github.com/cachelab/cachelab/internal/goroutines"
	"github.com/cachelab/cachelab/internal/testdeadline"
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
		case <-testdeadline.Context(t).Done():
			t.Fatal("a waiting watch-list did not end once its cache was released")
		}
	}
}

// Waiting counts the requests of the goroutines it is given: two
// clients of one server, told apart by a pprof label their goroutines
// carry, each see only their own request wait. Stalled, which counts
// every request to the server, would say yes for the second client while
// its request was still on its way (a CI run under load: one informer's
// watch-list was still in kube-apiserver's handler, and the clock moved
// before it reached the cache).
func TestWaitingCountsTheGoroutinesGiven(t *testing.T) {
	wd, s := heldBehind(t)
	tr := true
	done := make(chan struct{}, 2)
	watchList := func(client string) {
		pprof.Do(context.Background(), pprof.Labels("client", client), func(ctx context.Context) {
			go func() {
				w, err := s.ListerWatcher("").WatchWithContext(ctx, metav1.ListOptions{SendInitialEvents: &tr,
					ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true})
				if err == nil {
					w.Stop()
				}
				done <- struct{}{}
			}()
		})
	}
	waitingOf := func(client string) int {
		goroutines.ShowLabels()
		var mine []string
		for _, g := range goroutines.All() {
			if goroutines.Label(g, "client") == client {
				mine = append(mine, g)
			}
		}
		return apistorage.Waiting(mine, s)
	}
	watchList("one")
	waitFor(t, s.Stalled)
	if n := waitingOf("one"); n != 1 {
		t.Errorf("client one's waiting requests: %d, want 1", n)
	}
	if n := waitingOf("two"); n != 0 {
		t.Errorf("client two, which has made no request, has %d waiting", n)
	}
	watchList("two")
	waitFor(t, func() bool { return waitingOf("two") == 1 })
	if n := waitingOf("one"); n != 1 {
		t.Errorf("client one's waiting requests once two's waits too: %d, want 1", n)
	}
	s.ReleaseCache()
	wd.clock.Step(time.Minute) // the waits' own 3 s timers end too
	for range 2 {
		select {
		case <-done:
		case <-testdeadline.Context(t).Done():
			t.Fatal("a waiting watch-list did not end once its cache was released")
		}
	}
}

// Stalled says a consistent read waits only once the wait's own 3 s
// timer is set on the clock: from then on, moving the clock 3 s ends the
// wait (the LIST falls back to etcd). Said earlier, while the goroutine
// that sets the timer has not run yet (a loaded machine), the move would
// pass the timer by and the LIST would wait for good: the workshop's
// lab player moves the clock exactly so far (notebooks/07-watch-cache).
func TestStalledMeansTheClockEndsTheWait(t *testing.T) {
	wd, s := heldBehind(t)
	for i := range 20 {
		ctx, src := apistorage.WithSource(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := s.ListerWatcher("").ListWithContext(ctx, metav1.ListOptions{})
			done <- err
		}()
		waitFor(t, s.Stalled)
		wd.clock.Step(3 * time.Second)
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("read %d: %v", i, err)
			}
			if src.String() != "etcd" {
				t.Fatalf("read %d answered from %s, want etcd (the cache is held behind it)", i, src)
			}
		case <-testdeadline.Context(t).Done():
			t.Fatalf("read %d: the clock moved 3 s once the read was stalled, and it still waits: %s", i, s.CacheState())
		}
	}
}

// heldBehind is a world whose server's cache holds at revision 2, with
// ns0/a, while etcd has gone on to 3, with ns0/b.
func heldBehind(t *testing.T) (*world, *apistorage.Server) {
	t.Helper()
	wd := newWorld(t)
	wd.create(t, "ns0", "a")
	s := wd.server(t, true)
	waitFor(t, func() bool { return s.CacheCaughtUp(2) })
	s.HoldCache()
	wd.create(t, "ns0", "b")
	return wd, s
}
