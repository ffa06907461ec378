package apistorage_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/cachelab/cachelab/internal/testdeadline"
)

// A clock moved right after New reaches the cacher's bookmark timer at
// once, not whenever its dispatcher ends its first wall-clock poll (fuzz
// seed 299). The cacher's bookmark buckets are counted in seconds from its
// start: at 45s the tick moves them on to 46s, so a watch-list opened
// after the tick, its initial-events bookmark not yet confirmed, is due
// at 46s and gets a bookmark there. Opened before the tick is handled, it
// would be due at 45s, confirmed then, and not due again until 1m45s.
func TestClockStepAfterNewReachesTheDispatcher(t *testing.T) {
	for i := range 5 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			wd := newWorld(t)
			s := wd.server(t, true)
			wd.clock.Step(45 * time.Second)
			waitFor(t, s.Quiescent)

			lw := s.ListerWatcher("")
			tr := true
			w, err := lw.WatchWithContext(context.Background(), metav1.ListOptions{SendInitialEvents: &tr,
				ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true, TimeoutSeconds: ptr(int64(600))})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			if got := next(t, w); got != "BOOKMARK rv 1" {
				t.Fatalf("first event %q, want the initial events' end, BOOKMARK rv 1", got)
			}
			wd.create(t, "ns0", "a")
			if got := next(t, w); got != "ADDED a@2" {
				t.Fatalf("after a create: %q, want ADDED a@2", got)
			}
			waitFor(t, func() bool { return s.CacheCaughtUp(2) && s.Quiescent() })

			wd.clock.Step(time.Second)
			var got []string
			waitFor(t, func() bool {
				select {
				case e := <-w.ResultChan():
					got = append(got, describe(e))
					return false
				default:
					return s.Quiescent()
				}
			})
			if len(got) != 1 || got[0] != "BOOKMARK rv 2" {
				t.Errorf("at 46s the watch got %q, want one bookmark, BOOKMARK rv 2 (due at 46s, the bucket after New's 45s tick)", got)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func next(t *testing.T, w watch.Interface) string {
	t.Helper()
	select {
	case e := <-w.ResultChan():
		return describe(e)
	case <-testdeadline.Context(t).Done():
		t.Fatal("no event by the test binary's deadline")
		return ""
	}
}

func describe(e watch.Event) string {
	u, ok := e.Object.(*unstructured.Unstructured)
	if !ok {
		return fmt.Sprintf("%s %T", e.Type, e.Object)
	}
	if e.Type == watch.Bookmark {
		return fmt.Sprintf("BOOKMARK rv %s", u.GetResourceVersion())
	}
	return fmt.Sprintf("%s %s@%s", e.Type, u.GetName(), u.GetResourceVersion())
}
