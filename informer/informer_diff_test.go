package informer_test

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/cachelab/cachelab/informer"
	dt "github.com/cachelab/cachelab/internal/difftest"
	"github.com/cachelab/cachelab/store"
	"k8s.io/client-go/tools/cache"
)

var (
	pod        = dt.Pod
	bothStacks = []informer.Stack{informer.Default, informer.Classic}
	gone       = &apierrors.NewResourceExpired("too old resource version").ErrStatus
)

// inBoth runs body as a subtest per stack, each in its own synctest
// bubble with a fresh InformerWorld, stops it, and checks that cachelab's
// transcript holds the lines want[stack] (so each test shows it exercised
// its behaviour).
func inBoth(t *testing.T, cfg dt.InformerConfig, body func(w *dt.InformerWorld), want map[informer.Stack][]string) {
	t.Helper()
	inStacks(t, bothStacks, cfg, body, want)
}

func inStacks(t *testing.T, stacks []informer.Stack, cfg dt.InformerConfig, body func(w *dt.InformerWorld), want map[informer.Stack][]string) {
	t.Helper()
	for _, st := range stacks {
		t.Run(string(st), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := cfg
				c.Stack = st
				w := dt.NewInformerWorld(t, c)
				body(w)
				w.Stop()
				got := w.Transcript()
				if testing.Verbose() {
					t.Log(got)
				}
				for _, line := range want[st] {
					if !strings.Contains(got, line) {
						t.Errorf("transcript lacks %q:\n%s", line, got)
					}
				}
			})
		})
	}
}

func both(lines ...string) map[informer.Stack][]string {
	return map[informer.Stack][]string{informer.Default: lines, informer.Classic: lines}
}

func dur(d time.Duration) *time.Duration { return &d }

// client-go: controller.go processDeltas, processReplacedAllInfo;
// shared_informer.go (P1, P2, P3, P9): the initial list, then watch events,
// end to end.
func TestAddUpdateDelete(t *testing.T) {
	inBoth(t, dt.InformerConfig{}, func(w *dt.InformerWorld) {
		w.Create(pod("ns/a"))
		w.Create(pod("ns/b"))
		w.AddHandler("h", dt.HandlerConfig{})
		w.Start()
		w.Update(pod("ns/a", dt.Label("v", "2")))
		w.Delete(pod("ns/b"))
		w.Create(pod("other/c"))
		w.Settle()
	}, both(
		"h: OnAdd ns/a@2 initial", "h: OnAdd ns/b@3 initial",
		"h: OnUpdate ns/a@2 -> ns/a@4", "h: OnDelete ns/b@5", "h: OnAdd other/c@6\n",
		"synced=true handlers=map[h:true]",
	))
}

// client-go: controller.go processReplacedAllInfo (P3) and DeltaFIFO
// Replace (D4); shared_informer.go OnUpdate (P6): a delete missed while
// the watch was down becomes a DeletedFinalStateUnknown, a changed object
// an update, an unchanged one a sync update.
func TestRelistAfterMissedDelete(t *testing.T) {
	inBoth(t, dt.InformerConfig{}, func(w *dt.InformerWorld) {
		w.Create(pod("ns/a"))
		w.Create(pod("ns/b"))
		w.Create(pod("ns/c"))
		w.AddHandler("h", dt.HandlerConfig{})
		w.Start()
		w.Both("break watches with 410", func(s *dt.Server) { s.BreakWatches(gone) })
		w.Settle()
		w.Delete(pod("ns/b"))
		w.Update(pod("ns/a", dt.Label("v", "2")))
		w.Both("compact", (*dt.Server).Compact)
		w.Advance(1600 * time.Millisecond)
	}, both(
		"h: OnDelete Tombstone(ns/b: ns/b@3)",
		"h: OnUpdate ns/a@2 -> ns/a@6",
		"h: OnUpdate ns/c@4 -> ns/c@4 (sync)",
	))
}

// client-go: controller.go processDeltas SyncAll (P4), DeltaFIFO Resync
// (D5); shared_informer.go shouldResync (P6, P7): handlers with different
// periods; only due listeners hear syncs, and a relist's unchanged objects
// reach only listeners that were due at the last check.
func TestResyncPeriods(t *testing.T) {
	inBoth(t, dt.InformerConfig{ResyncPeriod: 30 * time.Second}, func(w *dt.InformerWorld) {
		w.Create(pod("ns/a"))
		w.Create(pod("ns/b"))
		w.AddHandler("every30s", dt.HandlerConfig{})
		w.AddHandler("every60s", dt.HandlerConfig{Resync: dur(time.Minute)})
		w.AddHandler("never", dt.HandlerConfig{Resync: dur(0)})
		w.Start()
		w.Advance(30 * time.Second)
		w.Both("break watches with 410", func(s *dt.Server) { s.BreakWatches(gone) })
		w.Settle()
		w.Advance(1600 * time.Millisecond)
		w.Advance(30 * time.Second)
		w.Advance(30 * time.Second)
	}, both(
		"-- 30s later\nevery30s: OnUpdate ns/a@2 -> ns/a@2 (sync)",
		"every30s: OnUpdate ns/b@3 -> ns/b@3 (sync)",
	))
}

// client-go: shared_informer.go AddEventHandlerWithOptions,
// determineResyncPeriod (P7): a handler asking for less than the check
// period before start lowers it; after start it is raised to it; under
// 1 s becomes 1 s.
func TestResyncPeriodFitting(t *testing.T) {
	inBoth(t, dt.InformerConfig{ResyncPeriod: 30 * time.Second}, func(w *dt.InformerWorld) {
		w.Create(pod("ns/a"))
		w.AddHandler("default", dt.HandlerConfig{})
		w.AddHandler("every10s", dt.HandlerConfig{Resync: dur(10 * time.Second)})
		w.Start()
		w.AddHandler("late-every2s", dt.HandlerConfig{Resync: dur(2 * time.Second)})
		w.Settle()
		for range 4 {
			w.Advance(10 * time.Second)
		}
	}, both("-- 10s later\nevery10s: OnUpdate ns/a@2 -> ns/a@2 (sync)", "late-every2s: OnUpdate ns/a@2 -> ns/a@2 (sync)"))
	inBoth(t, dt.InformerConfig{ResyncPeriod: 5 * time.Second}, func(w *dt.InformerWorld) {
		w.Create(pod("ns/a"))
		w.AddHandler("tiny", dt.HandlerConfig{Resync: dur(100 * time.Millisecond)})
		w.Start()
		for range 3 {
			w.Advance(time.Second)
		}
	}, both("-- 1s later\ntiny: OnUpdate ns/a@2 -> ns/a@2 (sync)"))
	inBoth(t, dt.InformerConfig{}, func(w *dt.InformerWorld) {
		w.Create(pod("ns/a"))
		w.AddHandler("wants10s", dt.HandlerConfig{Resync: dur(10 * time.Second)})
		w.Start()
		w.Advance(30 * time.Second)
	}, both("-- 30s later\nstate:"))
}

// client-go: shared_informer.go AddEventHandlerWithOptions (P8, P9): a
// handler added after start first gets OnAdd(obj, true) for everything
// cached, and its registration syncs once it has handled them.
func TestLateHandler(t *testing.T) {
	inBoth(t, dt.InformerConfig{}, func(w *dt.InformerWorld) {
		w.Create(pod("ns/a"))
		w.Create(pod("ns/b"))
		w.AddHandler("early", dt.HandlerConfig{})
		w.Start()
		w.Create(pod("ns/c"))
		w.Settle()
		w.AddHandler("late", dt.HandlerConfig{Slow: true})
		w.Settle()
		w.ReleaseHandler("late")
		w.Settle()
	}, both(
		"late: OnAdd ns/a@2 initial", "late: OnAdd ns/c@4 initial",
		"handlers=map[early:true late:false]", "handlers=map[early:true late:true]",
	))
}

// client-go: shared_informer.go processorListener (P9, P10): a slow handler
// delays only itself, its registration is not synced until it handled the
// initial list, and RemoveEventHandler drops what it had not delivered.
func TestSlowHandler(t *testing.T) {
	inBoth(t, dt.InformerConfig{}, func(w *dt.InformerWorld) {
		w.IgnoreRegistrationSync = w.Cfg.Stack == informer.Classic
		w.Create(pod("ns/a"))
		w.AddHandler("fast", dt.HandlerConfig{})
		w.AddHandler("slow", dt.HandlerConfig{Slow: true})
		w.AddHandler("removed", dt.HandlerConfig{Slow: true})
		w.Start()
		w.Create(pod("ns/b"))
		w.Update(pod("ns/a", dt.Label("v", "2")))
		w.Settle()
		w.RemoveHandler("removed")
		w.ReleaseHandler("slow")
		w.ReleaseHandler("removed")
		w.Settle()
		w.RemoveHandler("removed") // a second time is no error
		w.Settle()
	}, map[informer.Stack][]string{
		informer.Default: {
			"fast: OnUpdate ns/a@2 -> ns/a@4",
			"synced=true handlers=map[fast:true removed:false slow:false]",
			"slow: OnUpdate ns/a@2 -> ns/a@4",
			"removed: OnAdd ns/a@2 initial\nstate:",
		},
		informer.Classic: {
			"fast: OnUpdate ns/a@2 -> ns/a@4",
			"slow: OnUpdate ns/a@2 -> ns/a@4",
			"removed: OnAdd ns/a@2 initial\nstate:",
		},
	})
}

// client-go: controller.go processDeltas Deleted (P11), the_real_fifo.go
// (R1) vs delta_fifo.go Delete (D3): a DELETED for a key the informer
// never had reaches handlers in the default stack, and is dropped in the
// classic one.
func TestDeleteOfUnknownKey(t *testing.T) {
	inBoth(t, dt.InformerConfig{}, func(w *dt.InformerWorld) {
		w.AddHandler("h", dt.HandlerConfig{})
		w.Start()
		w.Both("send DELETED ns/ghost@7", func(s *dt.Server) {
			s.SendRaw(watch.Event{Type: watch.Deleted, Object: pod("ns/ghost", dt.RV(7))})
		})
		w.Settle()
	}, map[informer.Stack][]string{
		informer.Default: {"h: OnDelete ns/ghost@7"},
		informer.Classic: {"server: send DELETED ns/ghost@7\nstate:"},
	})
}

// client-go: controller.go processDeltasInBatch (P12), the_real_fifo.go
// PopBatch (R6): while processing is held, deltas pile up; once released
// the default stack takes them as a batch. Handlers hear the same calls
// in the same order in both stacks.
func TestBatchAfterHeldProcessing(t *testing.T) {
	inStacks(t, bothStacks[:1], dt.InformerConfig{GateIndex: true}, func(w *dt.InformerWorld) {
		w.AddHandler("h", dt.HandlerConfig{})
		w.Start()
		w.HoldProcessing()
		w.Create(pod("ns/gate", dt.Label(dt.LabelGate, "yes")))
		w.Create(pod("ns/a"))
		w.Create(pod("ns/b"))
		w.Update(pod("ns/a", dt.Label("v", "2")))
		w.Delete(pod("ns/b"))
		w.Settle()
		w.ReleaseProcessing()
		w.Settle()
	}, both("h: OnAdd ns/gate@2", "h: OnAdd ns/a@3", "h: OnAdd ns/b@4", "h: OnUpdate ns/a@3 -> ns/a@5", "h: OnDelete ns/b@6"))
}

// client-go: RealFIFO Bookmark (R3) and processDeltas Bookmark (P5): the
// default stack moves the indexer's resourceVersion on a bookmark; the
// classic stack's DeltaFIFO takes no bookmarks.
func TestBookmarkReachesIndexer(t *testing.T) {
	inBoth(t, dt.InformerConfig{}, func(w *dt.InformerWorld) {
		w.Create(pod("ns/a"))
		w.Start()
		w.Create(pod("other/b"))
		w.Both("bookmark at 3, then 4", func(s *dt.Server) {
			s.Bookmark()
		})
		w.Settle()
		w.Both("send BOOKMARK@9", func(s *dt.Server) {
			b := &unstructured.Unstructured{}
			b.SetResourceVersion("9")
			s.SendRaw(watch.Event{Type: watch.Bookmark, Object: b})
		})
		w.Settle()
	}, map[informer.Stack][]string{
		informer.Default: {"storeRV=9 lastSyncRV=9"},
		informer.Classic: {"storeRV=3 lastSyncRV=9"},
	})
}

// client-go: shared_informer.go SetTransform, SetWatchErrorHandler,
// AddIndexers (P13); controller.go FilteringResourceEventHandler (P13).
func TestSettersAndFilter(t *testing.T) {
	inBoth(t, dt.InformerConfig{Transform: true}, func(w *dt.InformerWorld) {
		w.Create(pod("ns/a", dt.Label("app", "web")))
		w.Create(pod("ns/b"))
		w.AddHandler("web-only", dt.HandlerConfig{Filter: func(obj any) bool {
			u, ok := obj.(*unstructured.Unstructured)
			return ok && u.GetLabels()["app"] == "web"
		}})
		w.Start()
		w.Compare("SetTransform after start", errString(w.CLI.SetTransform(nil)), errString(w.CGI.SetTransform(nil)))
		w.Compare("SetWatchErrorHandler after start",
			errString(w.CLI.SetWatchErrorHandler(nil)), errString(w.CGI.SetWatchErrorHandlerWithContext(nil)))
		w.Compare("AddIndexers after start",
			errString(w.CLI.AddIndexers(store.Indexers{"app": dt.IndexByApp})),
			errString(w.CGI.AddIndexers(cache.Indexers{"app": dt.IndexByApp})))
		w.Compare("ByIndex app=web", keysOf(w.CLI.GetIndexer().ByIndex("app", "web")), keysOf(w.CGI.GetIndexer().ByIndex("app", "web")))
		// One write per step: a classic DeltaFIFO groups a key's deltas
		// when Pop lags, which would make the order timing-dependent.
		w.Update(pod("ns/b", dt.Label("app", "web")))
		w.Settle()
		w.Update(pod("ns/a", dt.Label("app", "db")))
		w.Settle()
		w.Update(pod("ns/a", dt.Label("app", "db"), dt.Label("v", "2")))
		w.Settle()
		w.Update(pod("ns/b", dt.Label("app", "web"), dt.Label("v", "2")))
		w.Settle()
		w.Stop()
		w.Compare("AddIndexers after stop",
			errString(w.CLI.AddIndexers(store.Indexers{"x": dt.IndexByApp})),
			errString(w.CGI.AddIndexers(cache.Indexers{"x": dt.IndexByApp})))
		w.Compare("AddEventHandler after stop", errIs(w.CLI.AddEventHandler(nil)), errIs(w.CGI.AddEventHandler(nil)))
	}, both(
		"web-only: OnAdd ns/b@4+t", "web-only: OnDelete ns/a@2+t", "web-only: OnUpdate ns/b@4+t",
	))
}

// client-go: reflector.go RunWithContext, SharedIndexInformer
// SetWatchErrorHandler (F4): a failing LIST reaches the WatchErrorHandler
// and is retried after backoff; in the default stack a watch-list that is
// refused falls back to LIST first.
func TestWatchErrorHandler(t *testing.T) {
	inBoth(t, dt.InformerConfig{}, func(w *dt.InformerWorld) {
		w.Create(pod("ns/a"))
		w.AddHandler("h", dt.HandlerConfig{})
		w.Both("refuse next watch and list with 403", func(s *dt.Server) {
			s.FailNextWatch(apierrors.NewForbidden(podsGR(), "", errString0("no")))
			s.FailNextList(apierrors.NewForbidden(podsGR(), "", errString0("no")))
		})
		w.Start()
		w.Advance(1600 * time.Millisecond)
	}, both("watch error handler: error: failed to list *unstructured.Unstructured: pods is forbidden: no", "h: OnAdd ns/a@2 initial"))
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

func errIs[T any](_ T, err error) string { return errString(err) }

func keysOf(objs []any, err error) []string {
	if err != nil {
		return []string{"error: " + err.Error()}
	}
	return dt.Sorted(func() []string {
		var s []string
		for _, o := range objs {
			s = append(s, dt.Describe(o))
		}
		return s
	}())
}

type strErr string

func (e strErr) Error() string { return string(e) }

func errString0(s string) error { return strErr(s) }
