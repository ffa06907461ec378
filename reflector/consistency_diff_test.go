package reflector_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/tools/cache"
	cgdetector "k8s.io/client-go/util/consistencydetector"
	"k8s.io/klog/v2"

	"github.com/cachelab/cachelab/consistencydetector"
	dt "github.com/cachelab/cachelab/internal/difftest"
	"github.com/cachelab/cachelab/reflector"
	"github.com/cachelab/cachelab/store"
)

// detectorOn switches the data consistency detector on in both
// implementations for the test, as KUBE_WATCHLIST_INCONSISTENCY_DETECTOR
// would at process start (V1), and makes a recovered panic not crash
// the test binary (utilruntime.ReallyCrash false), so that both
// reflectors' panics can be compared.
func detectorOn(t *testing.T) {
	t.Cleanup(cgdetector.SetDataConsistencyDetectionForWatchListEnabledForTest(true))
	t.Cleanup(consistencydetector.SetDataConsistencyDetectionForWatchListEnabledForTest(true))
	dt.CatchPanics(t)
}

// withUID gives each test pod a UID: the detector sorts by UID, and real
// objects have one.
func withUID(key string, opts ...dt.ObjOption) *unstructured.Unstructured {
	return pod(key, append(opts, dt.UID("uid-"+key))...)
}

// client-go: reflector_data_consistency_detector.go, reflector.go
// watchList (V6): with the detector on and a watch-list that is what
// etcd has, the reflector LISTs the end bookmark's RV exactly, finds
// them equal, and stores the watch-list's objects; nothing panics.
func TestDetectorAgreesWithAConsistentWatchList(t *testing.T) {
	for _, tc := range []struct {
		name      string
		transform bool
		replace   string
	}{
		{"no transform", false, "store: Replace [ns/a@2 ns/b@3] rv=3"},
		// Each listed object is transformed once, as each streamed one
		// was on its way into the temporary store (+t1).
		{"transform", true, "store: Replace [ns/a@2+t1 ns/b@3+t1] rv=3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			detectorOn(t)
			run(t, dt.ReflectorConfig{Name: "pods", WatchList: true, Transform: tc.transform}, func(w *dt.ReflectorWorld) {
				w.Create(withUID("ns/a"))
				w.Create(withUID("ns/b"))
				w.Start()
				w.Update(withUID("ns/a", dt.Label("v", "2")))
				w.Settle()
			},
				watchListReq,
				`request: list rv="3" rvm=Exact`,
				tc.replace,
				"store: Update ns/a@4",
			)
		})
	}
}

// client-go: reflector_data_consistency_detector.go,
// util/consistencydetector, wait.DelayFunc.Until (V5, V6, F8): a
// watch-list that lost an object etcd has is caught: the reflector
// panics with "data inconsistency detected for <its name>, panicking!"
// before Replace, so the store never gets the watch-list's data. The
// panic is HandleCrash's (here with ReallyCrash false, so the process
// lives on): the next round, after the backoff, streams and checks
// again, and panics again while the watch cache is wrong.
func TestDetectorCatchesAWatchListThatLostAnObject(t *testing.T) {
	for _, transform := range []bool{false, true} {
		t.Run(map[bool]string{false: "no transform", true: "transform"}[transform], func(t *testing.T) {
			detectorOn(t)
			run(t, dt.ReflectorConfig{Name: "pods", WatchList: true, Transform: transform}, func(w *dt.ReflectorWorld) {
				w.Create(withUID("ns/a"))
				w.Create(withUID("ns/b"))
				w.Both("the watch-list loses ns/b", func(s *dt.Server) { s.LoseFromWatchList = map[string]bool{"ns/b": true} })
				w.Start()
				w.Advance(1600 * time.Millisecond) // the first relist backoff is [0.8, 1.6) s
				if got := w.Transcript(); strings.Contains(got, "store: Replace") {
					t.Errorf("the store got the watch-list's data the check refused:\n%s", got)
				}
			},
				watchListReq,
				`request: list rv="3" rvm=Exact`,
				`reported: reflector: error "Observed a panic" err=<nil> panic="data inconsistency detected for pods, panicking!"`,
				`request: watch rv="" rvm=NotOlderThan sendInitialEvents=true bookmarks=true timeout=in[300,600)`,
			)
		})
	}
}

// client-go: reflector.go watchList (V6): in LIST mode (the classic
// stack) there is no check, detector or not: v0.37.2 has no LIST
// counterpart (V7).
func TestDetectorIsWatchListOnly(t *testing.T) {
	detectorOn(t)
	run(t, dt.ReflectorConfig{Name: "pods", WatchList: false}, func(w *dt.ReflectorWorld) {
		w.Create(withUID("ns/a"))
		w.Create(withUID("ns/b"))
		w.Start()
	},
		`request: list rv="0" limit=500`,
		"store: Replace [ns/a@2 ns/b@3] rv=3",
	)
}

// client-go: reflector.go RunWithContext, wait.DelayFunc.Until,
// utilruntime.HandleCrashWithContext (V6, F8): with
// utilruntime.ReallyCrash true, the default and what CI runs with, the
// detector's panic is logged, the panic handlers run, and the panic comes
// out of the reflector's Run on its own goroutine: nothing recovers it
// there, so the process ends. Here the test's goroutine recovers it, to
// compare what each implementation's Run panicked with.
func TestDetectorPanicLeavesRun(t *testing.T) {
	t.Cleanup(cgdetector.SetDataConsistencyDetectionForWatchListEnabledForTest(true))
	t.Cleanup(consistencydetector.SetDataConsistencyDetectionForWatchListEnabledForTest(true))
	var handled int
	saved := utilruntime.PanicHandlers
	utilruntime.PanicHandlers = append(append([]func(context.Context, any){}, saved...), func(context.Context, any) { handled++ })
	t.Cleanup(func() { utilruntime.PanicHandlers = saved })
	synctest.Test(t, func(t *testing.T) {
		got := map[string][]string{}
		for _, impl := range []string{"cachelab", "client-go"} {
			srv := dt.NewServer()
			srv.Write("ADDED", withUID("ns/a"))
			srv.Write("ADDED", withUID("ns/b"))
			srv.LoseFromWatchList = map[string]bool{"ns/a": true}
			ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logr.Discard()))
			var run func()
			if impl == "cachelab" {
				r := reflector.New(srv, store.New(store.Options{}), reflector.Options{Name: "pods", UseWatchList: true})
				run = func() { r.Run(ctx) }
			} else {
				clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, true)
				r := cache.NewReflectorWithOptions(srv, &unstructured.Unstructured{}, cache.NewStore(cache.MetaNamespaceKeyFunc), cache.ReflectorOptions{Name: "pods"})
				run = func() { r.RunWithContext(ctx) }
			}
			out := func() (out []string) {
				defer func() { out = append(out, fmt.Sprint("Run panicked: ", recover())) }()
				run()
				return []string{"Run returned"}
			}()
			cancel()
			synctest.Wait()
			var verbs []string
			for _, r := range srv.Requests() {
				verbs = append(verbs, r.Verb+" "+r.Opts.ResourceVersion+" "+string(r.Opts.ResourceVersionMatch))
			}
			got[impl] = append(out, fmt.Sprintf("panic handlers=%d requests=%v", handled, verbs))
			handled = 0
		}
		if d := cmp.Diff(got["client-go"], got["cachelab"]); d != "" {
			t.Errorf("(-client-go +cachelab):\n%s", d)
		}
		if want := "Run panicked: data inconsistency detected for pods, panicking!"; got["cachelab"][0] != want {
			t.Errorf("got %q, want %q", got["cachelab"], want)
		}
	})
}
