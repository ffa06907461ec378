package apistorage_test

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/cachelab/cachelab/apistorage"
	"github.com/cachelab/cachelab/internal/scenarioclock"
	"github.com/cachelab/cachelab/internal/testdeadline"
	"github.com/cachelab/cachelab/listwatch"
)

// NextWork says when the watch cache next does something on its own
// clock, so that a simulation can pass the seconds before it in one move.
// Held against what a watch gets, second by second for six minutes: a
// bookmark comes only at a second NextWork said was due (each minute, and
// before the watch's deadline), and the cache's clock has waiters every
// second and every 15 s (the bookmark timer, the snapshot compactor's
// poll) that neither NextWork nor the clock's Next counts.
func TestNextWorkMatchesTheBookmarks(t *testing.T) {
	wd := newWorld(t)
	clk := scenarioclock.New(epoch)
	s, err := apistorage.New(testdeadline.Context(t), wd.etcd.Client(), listwatch.Pods, apistorage.Options{Cache: true, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	wd.create(t, "ns0", "a")
	waitFor(t, func() bool { return s.CacheCaughtUp(2) && s.Quiescent() })

	lw := s.ListerWatcher("")
	tr := true
	plain, err := lw.WatchWithContext(context.Background(), metav1.ListOptions{ResourceVersion: "2", AllowWatchBookmarks: true, TimeoutSeconds: ptr(int64(300))})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Stop()
	streaming, err := lw.WatchWithContext(context.Background(), metav1.ListOptions{SendInitialEvents: &tr,
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true, TimeoutSeconds: ptr(int64(600))})
	if err != nil {
		t.Fatal(err)
	}
	defer streaming.Stop()
	if got := next(t, streaming); got != "ADDED a@2" {
		t.Fatalf("the watch-list's first event: %q", got)
	}
	wd.create(t, "ns0", "b") // the cache moves past both watches' start: they are due bookmarks

	// settle waits until the cache is quiescent, taking every event the
	// watches are handed on the way; it returns how many were bookmarks.
	// The plain watch ends at its deadline (5 minutes).
	watches := []watch.Interface{plain, streaming}
	settle := func() (bookmarks int) {
		waitFor(t, func() bool {
			for i, w := range watches {
				select {
				case e, open := <-w.ResultChan():
					if !open {
						watches = append(watches[:i], watches[i+1:]...)
					} else if e.Type == watch.Bookmark {
						bookmarks++
					}
					return false
				default:
				}
			}
			return s.CacheCaughtUp(3) && s.Quiescent()
		})
		return bookmarks
	}
	settle()
	bookmarks, longGap := 0, false
	for range 360 {
		at, due := s.NextWork()
		if clkAt, ok := clk.Next(); !ok || clkAt.Sub(clk.Now()) > 15*time.Second {
			longGap = longGap || !due || at.Sub(clk.Now()) > 15*time.Second
		}
		clk.Step(time.Second)
		now := clk.Now()
		if n := settle(); n > 0 {
			bookmarks += n
			if !due || at.After(now) {
				t.Errorf("at %v %d bookmarks came; NextWork said %v (due %t)", now.Sub(epoch), n, at.Sub(epoch), due)
			}
		}
	}
	if bookmarks < 8 {
		t.Errorf("%d bookmarks in six minutes, want at least 8 (each minute, two watches, and before the deadline)", bookmarks)
	}
	if !longGap {
		t.Error("neither NextWork nor the clock's Next ever skipped 15 s: the cache's own ticks count")
	}
}
