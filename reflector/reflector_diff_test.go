package reflector_test

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dt "github.com/cachelab/cachelab/internal/difftest"
)

// run runs body in a synctest bubble over a fresh ReflectorWorld, then
// stops both reflectors and checks that the transcript holds every want
// line (so the test provably exercised what it claims).
func run(t *testing.T, cfg dt.ReflectorConfig, body func(w *dt.ReflectorWorld), want ...string) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		w := dt.NewReflectorWorld(t, cfg)
		body(w)
		w.Stop()
		got := w.Transcript()
		for _, line := range want {
			if !strings.Contains(got, line) {
				t.Errorf("transcript lacks %q:\n%s", line, got)
			}
		}
	})
}

var (
	pod     = dt.Pod
	expired = func() error {
		return apierrors.NewResourceExpired("The resourceVersion for the provided list is too old.")
	}
)

const (
	watchListReq = `request: watch rv="" rvm=NotOlderThan sendInitialEvents=true bookmarks=true timeout=in[300,600)`
)

// client-go: reflector.go watchList, handleAnyWatch (F1, F2)
func TestWatchListStreamsThenCarriesOn(t *testing.T) {
	run(t, dt.ReflectorConfig{WatchList: true, Bookmarks: true}, func(w *dt.ReflectorWorld) {
		w.Create(pod("ns/a"))
		w.Create(pod("ns/b"))
		w.Start()
		w.Update(pod("ns/a", dt.Label("v", "2")))
		w.Settle()
		w.Both("bookmark", (*dt.Server).Bookmark)
		w.Settle()
		w.Both("close watches", (*dt.Server).CloseWatches)
		w.Settle()
		w.Delete(pod("ns/b"))
		w.Settle()
	},
		watchListReq,
		"store: Replace [ns/a@2 ns/b@3] rv=3",
		"store: Update ns/a@4",
		"store: Bookmark 4",
		`request: watch rv="4" bookmarks=true timeout=in[300,600)`,
		"store: Delete ns/b@5",
		"last synced RV: 5",
	)
}

// client-go: reflector.go watchList; util/watchlist (F1): a ListerWatcher
// that declines watch-list gets LIST then WATCH.
func TestWatchListDeclined(t *testing.T) {
	run(t, dt.ReflectorConfig{WatchList: true, NoWatchListLW: true}, func(w *dt.ReflectorWorld) {
		w.Create(pod("ns/a"))
		w.Start()
	},
		`request: list rv="0" limit=500`,
		"store: Replace [ns/a@2] rv=2",
		`request: watch rv="2" bookmarks=true timeout=in[300,600)`,
	)
}

// client-go: reflector.go ListAndWatchWithContext (F1): a watch-list that
// fails for good falls back to LIST for this cycle only; the next relist
// tries watch-list again.
func TestWatchListFallbackIsPerCycle(t *testing.T) {
	run(t, dt.ReflectorConfig{WatchList: true}, func(w *dt.ReflectorWorld) {
		w.Create(pod("ns/a"))
		w.Both("fail next watch 400", func(s *dt.Server) { s.FailNextWatch(apierrors.NewBadRequest("no watch-list here")) })
		w.Start()
		w.Both("break watches with 410", func(s *dt.Server) {
			s.BreakWatches(&apierrors.NewResourceExpired("too old resource version").ErrStatus)
		})
		w.Settle()
		w.Advance(1600 * time.Millisecond) // the first backoff step is [0.8, 1.6) s
	},
		`request: list rv="0" limit=500`,
		`request: watch rv="2" rvm=NotOlderThan sendInitialEvents=true bookmarks=true timeout=in[300,600)`,
	)
}

// client-go: reflector.go handleAnyWatch, watchList (F2): a stream that
// ends before the end bookmark, after delivering events, is retried at
// once; one that ends in under 1 s with nothing is a very short watch,
// which falls back to LIST.
func TestWatchListWithoutEndBookmark(t *testing.T) {
	run(t, dt.ReflectorConfig{WatchList: true}, func(w *dt.ReflectorWorld) {
		w.Create(pod("ns/a"))
		w.Both("hold end bookmark", func(s *dt.Server) { s.SkipEndBookmark = true })
		w.Start()
		w.Both("close watches", (*dt.Server).CloseWatches)
		w.Settle()
		w.Both("delete all, close watches", func(s *dt.Server) {})
		w.Delete(pod("ns/a"))
		w.Both("close watches", (*dt.Server).CloseWatches)
		w.Settle()
		w.Both("close watches", (*dt.Server).CloseWatches)
		w.Settle()
	},
		`request: list rv="0" limit=500`,
		"store: Replace [] rv=3",
	)
}

// client-go: reflector.go handleAnyWatch (F3): every event type, the RV
// moving after each, bookmarks only for a store that takes them.
func TestEventsWithoutBookmarkStore(t *testing.T) {
	run(t, dt.ReflectorConfig{}, func(w *dt.ReflectorWorld) {
		w.Start()
		w.Create(pod("ns/a"))
		w.Update(pod("ns/a", dt.Label("x", "1")))
		w.Settle()
		w.Both("bookmark", (*dt.Server).Bookmark)
		w.Settle()
		w.Delete(pod("ns/a"))
		w.Settle()
	},
		"store: Add ns/a@2",
		"store: Update ns/a@3",
		"store: Delete ns/a@4",
		"last synced RV: 4",
	)
}

// client-go: reflector.go handleAnyWatch (F3): objects of the wrong type,
// Tables and objects without metadata are dropped and do not move the RV.
func TestEventsDropped(t *testing.T) {
	run(t, dt.ReflectorConfig{}, func(w *dt.ReflectorWorld) {
		w.Start()
		w.Both("send a Status as ADDED", func(s *dt.Server) {
			s.SendRaw(watchEvent("ADDED", &metav1.Status{ListMeta: metav1.ListMeta{ResourceVersion: "99"}}))
		})
		w.Settle()
		w.Both("send a Table as ADDED", func(s *dt.Server) { s.SendRaw(watchEvent("ADDED", table())) })
		w.Settle()
		w.Create(pod("ns/a"))
		w.Settle()
		// A store that refuses a write: reported, and the RV still moves.
		w.Create(pod("ns/b", dt.Label(dt.LabelStoreFails, "y")))
		w.Settle()
		w.Update(pod("ns/b", dt.Label(dt.LabelStoreFails, "y"), dt.Label("v", "2")))
		w.Settle()
		w.Delete(pod("ns/b", dt.Label(dt.LabelStoreFails, "y")))
		w.Settle()
	}, "store: Add ns/a@2", "last synced RV: 2",
		`reported: reflector: error "Unexpected watch event object type" err=<nil> actualType="*v1.Status" expectedType="*unstructured.Unstructured" reflector="(its name)"`,
		`reported: reflector: error "Unsupported watch event object gvk" err=<nil> actualGVK="meta.k8s.io/v1, Kind=Table" reflector="(its name)"`,
		`reported: reflector: error "Unable to add watch event object to store" err=store refused ns/b@3`,
		`reported: reflector: error "Unable to update watch event object to store" err=store refused ns/b@4`,
		`reported: reflector: error "Unable to delete watch event object from store" err=store refused ns/b@5`,
		"last synced RV: 5")
}

// client-go: reflector.go watch, handleAnyWatch (F3): after a LIST that
// carried no resourceVersion, the watch starts at RV "": its synthetic
// ADDED events must not move the last synced RV, the first other event
// does.
func TestWatchFromEmptyRV(t *testing.T) {
	run(t, dt.ReflectorConfig{}, func(w *dt.ReflectorWorld) {
		w.Create(pod("ns/a"))
		w.Both("lists carry no RV", func(s *dt.Server) { s.EmptyListRV = true })
		w.Start()
		w.Create(pod("ns/b"))
		w.Settle()
		w.Update(pod("ns/b", dt.Label("x", "1")))
		w.Settle()
		w.Create(pod("ns/c"))
		w.Settle()
	},
		`request: watch rv="" bookmarks=true timeout=in[300,600)`,
		"store: Add ns/b@3",
		"last synced RV: 4",
		"last synced RV: 5",
	)
}

// client-go: reflector.go list, pager (F1): paging with WatchListPageSize,
// continue pages clearing RV, and the next relist from the last RV.
func TestListPaged(t *testing.T) {
	run(t, dt.ReflectorConfig{PageSize: 2}, func(w *dt.ReflectorWorld) {
		for _, k := range []string{"ns/a", "ns/b", "ns/c", "ns/d", "ns/e"} {
			w.Create(pod(k))
		}
		w.Start()
		w.Both("break watches with 500", func(s *dt.Server) {
			s.BreakWatches(&apierrors.NewInternalError(errString("boom")).ErrStatus)
		})
		w.Settle()
		w.Advance(1600 * time.Millisecond)
	},
		`request: list rv="0" limit=2`,
		`request: list rv="" limit=2 continue=yes`,
		`request: list rv="6" limit=2`,
	)
}

// client-go: reflector.go list (F1): an RV "0" list that comes back paged
// makes later relists paged too; without that, a relist at a set RV is
// unpaged.
func TestListPageSizeRules(t *testing.T) {
	run(t, dt.ReflectorConfig{}, func(w *dt.ReflectorWorld) {
		w.Create(pod("ns/a"))
		w.Start()
		w.Both("break watches with 410", func(s *dt.Server) {
			s.BreakWatches(&apierrors.NewResourceExpired("gone").ErrStatus)
		})
		w.Settle()
		w.Advance(1600 * time.Millisecond)
	},
		`request: list rv="0" limit=500`,
		`request: list rv="2"`,
	)
}

// client-go: reflector.go list (F5): a LIST at a compacted RV marks it
// unavailable and lists at once from RV "" (keeping the page size); a good
// list clears the mark.
func TestListExpiredRetriesFromEmptyRV(t *testing.T) {
	run(t, dt.ReflectorConfig{PageSize: 10}, func(w *dt.ReflectorWorld) {
		w.Create(pod("ns/a"))
		w.Start()
		w.Create(pod("ns/b"))
		w.Both("compact, break watches with 410", func(s *dt.Server) {
			s.Compact()
			s.BreakWatches(&apierrors.NewResourceExpired("gone").ErrStatus)
		})
		w.Settle()
		w.Update(pod("ns/b", dt.Label("x", "1")))
		w.Both("compact", (*dt.Server).Compact)
		w.Both("fail next list 410", func(s *dt.Server) { s.FailNextList(expired()) })
		w.Advance(1600 * time.Millisecond)
	},
		`request: list rv="3" limit=10`,
		`request: list rv="" limit=10`,
		"store: Replace [ns/a@2 ns/b@4] rv=4",
	)
}

// client-go: reflector.go list, isTooLargeResourceVersionError (F5).
func TestListTooLargeRV(t *testing.T) {
	run(t, dt.ReflectorConfig{}, func(w *dt.ReflectorWorld) {
		w.Create(pod("ns/a"))
		w.Both("fail next list 504 too large", func(s *dt.Server) { s.FailNextList(tooLarge()) })
		w.Start()
	},
		`request: list rv="0" limit=500`,
		`request: list rv="" limit=500`,
		"store: Replace [ns/a@2] rv=2",
	)
}

// client-go: reflector.go watchList (F5): in watch-list mode a 410 or too
// large RV retries the watch-list at once from RV "".
func TestWatchListExpiredRetriesFromEmptyRV(t *testing.T) {
	gone := &apierrors.NewResourceExpired("gone").ErrStatus
	run(t, dt.ReflectorConfig{WatchList: true}, func(w *dt.ReflectorWorld) {
		w.Create(pod("ns/a"))
		w.Start()
		w.Both("break watches with 410", func(s *dt.Server) { s.BreakWatches(gone) })
		w.Settle()
		w.Create(pod("ns/b"))
		w.Both("compact", (*dt.Server).Compact)
		w.Advance(1600 * time.Millisecond)
		w.Both("fail next watch 504 too large, break watches with 410", func(s *dt.Server) {
			s.FailNextWatch(tooLarge())
			s.BreakWatches(gone)
		})
		w.Settle()
		w.Advance(3200 * time.Millisecond)
	},
		`request: watch rv="2" rvm=NotOlderThan sendInitialEvents=true bookmarks=true timeout=in[300,600)`,
		watchListReq,
		"store: Replace [ns/a@2 ns/b@3] rv=3",
		`request: watch rv="3" rvm=NotOlderThan sendInitialEvents=true bookmarks=true timeout=in[300,600)`,
	)
}
