package fooctl_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"

	"github.com/cachelab/cachelab/controllertest"
	"github.com/cachelab/cachelab/examples/fooctl"
	"github.com/cachelab/cachelab/examples/fooctl/footest"
)

func TestMain(m *testing.M) {
	klog.SetLogger(logr.Discard()) // kube-apiserver's and client-go's logs, one world per placement
	os.Exit(m.Run())
}

// run runs the operator v says.
var run footest.Run = footest.Fooctl

// The fixed operator keeps every invariant under every placement of the
// default faults.
func TestFixedKeepsEveryInvariant(t *testing.T) { footest.FixedKeepsEveryInvariant(t, run) }

// Each mistake is found where explore finds it with the default faults
// (the benchmark explores it all):
//
//   - Mistaken's duplicate child without faults at all, and its lost
//     registration where the Foo's delete reaches the controller only as
//     a relist's tombstone (a partition) or not at all (a stop);
//   - MistakenSweep's deleted child where the controller starts anew and
//     hears of the child before its Foo (a stop over the update; K10);
//   - Swallowing's lost status without faults at all (K11, K12); where a
//     relist wakes the controller again (restart-apiserver at the end),
//     only its 409.
func TestMistakesAreFound(t *testing.T) {
	footest.MistakesAreFound(t, run, []footest.Found{
		{Variant: fooctl.Variant{Mistaken: true}, Broken: []string{"no-duplicates"}},
		{Variant: fooctl.Variant{Mistaken: true}, Placement: controllertest.Placement{Fault: "partition", At: 4, Heal: 5}, Broken: []string{"no-duplicates", "registered"}},
		{Variant: fooctl.Variant{Mistaken: true}, Placement: controllertest.Placement{Fault: "stop", At: 4, Heal: 5}, Broken: []string{"no-duplicates", "registered"}},
		{Variant: fooctl.Variant{Sweep: true}, Placement: controllertest.Placement{Fault: "stop", At: 3, Heal: 4}, Broken: []string{"kept"}},
		{Variant: fooctl.Variant{Status: true, Swallow: true}, Broken: []string{"no-stale-writes", "reported"}},
		{Variant: fooctl.Variant{Status: true, Swallow: true}, Placement: controllertest.Placement{Fault: "restart-apiserver", At: 3}, Broken: []string{"no-stale-writes"}},
	})
}

// What mistake 4 loses is what the requeue mends: StaleStatus, which
// returns its conflict, still writes from a stale read (no-stale-writes)
// but its status is written.
func TestRequeueMendsTheStatus(t *testing.T) {
	e := footest.Explorer(t, run, fooctl.Variant{Status: true})
	e.Controller = func(ctx context.Context, w *controllertest.World) error {
		c, err := fooctl.New(fooctl.Options{Config: w.Config(), Clock: w.Clock(), Metrics: w.QueueMetrics(), Status: true, Reconcile: fooctl.StaleStatus})
		if err != nil {
			return err
		}
		return c.Run(ctx)
	}
	o := e.Play(context.Background(), controllertest.Placement{})
	if got := o.BrokenInvariants(); o.Err != nil || !slices.Equal(got, []string{"no-stale-writes"}) {
		t.Errorf("broke %v (error %v), want [no-stale-writes]; what happened:\n%s", got, o.Err, strings.Join(o.Trace, "\n"))
	}
}

// BenchmarkExplore explores it all, and prints the reports:
//
//	go test ./examples/fooctl -run XXX -bench Explore -benchtime 1x -v
func BenchmarkExplore(b *testing.B) { footest.BenchmarkExplore(b, run) }

// BenchmarkWorld is what a placement pays for a world of its own: an
// etcd, kube-apiserver and its watch caches started and stopped.
func BenchmarkWorld(b *testing.B) {
	c0 := footest.CPUTime()
	for b.Loop() {
		w, err := controllertest.Start(context.Background(), controllertest.Options{Resources: []string{"configmaps", "deployments"}, CRDs: []string{fooctl.CRD}})
		if err != nil {
			b.Fatal(err)
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((footest.CPUTime()-c0).Milliseconds())/float64(b.N), "cpu-ms/world")
}

// Once every watch has sent its initial events, the world waits for
// WaitForCacheSync's tick before it lets another event go: the workers
// start before the events of what MistakenSweep deleted as the
// controller started reach it, on a quiet machine as on a loaded one.
// The first reconcile works from a cache that still holds the deleted
// ConfigMap (its PUT is answered 404). Were those events let go during
// the tick's 100 ms of the wall clock, they would come before the
// workers on a quiet machine and after them on a loaded one.
func TestWorkersStartOnceTheCachesHaveSynced(t *testing.T) {
	o := footest.Explorer(t, run, fooctl.Variant{Sweep: true}).Play(context.Background(), controllertest.Placement{Fault: "stop", At: 3, Heal: 4})
	if o.Err != nil {
		t.Fatal(o.Err)
	}
	at := func(prefix string) int {
		start := slices.Index(o.Trace, "start")
		for i := start + 1; start >= 0 && i < len(o.Trace); i++ {
			if strings.HasPrefix(strings.TrimSpace(o.Trace[i]), prefix) {
				return i
			}
		}
		t.Fatalf("no %q after start in the trace:\n%s", prefix, strings.Join(o.Trace, "\n"))
		return -1
	}
	if put, deleted := at("controller: PUT /api/v1/namespaces/ns0/configmaps/f-config 404"), at("event: DELETED configmaps ns0/f-config"); put > deleted {
		t.Errorf("the ConfigMap's DELETED event reached the controller before its workers started:\n%s", strings.Join(o.Trace, "\n"))
	}
}

// A watch that has sent no event and ends less than a second (of the
// wall clock) after it was opened is a "very short watch" to client-go's
// reflector, which then lists again; ended later, it watches again from
// its resourceVersion. Two close-watches in a row find the watches the
// first made silent: the world waits until they are a second old before
// it ends them, and the reflectors watch again from where they were
// (without it, they listed again on a quiet machine, and watched again
// on a loaded one).
func TestSilentWatchesAreOldWhenTheyEnd(t *testing.T) {
	e := footest.Explorer(t, run, fooctl.Variant{})
	story, err := controllertest.ParseStory("two-closes.txt", []byte(footest.StoryFile+"\nclose-watch\n----\n\nclose-watch\n----\n"))
	if err != nil {
		t.Fatal(err)
	}
	e.Story = story
	o := e.Play(context.Background(), controllertest.Placement{})
	if o.Err != nil {
		t.Fatal(o.Err)
	}
	second := slices.Index(o.Trace, "close-watch") + 1
	second += slices.Index(o.Trace[second:], "close-watch")
	var watches int
	for _, l := range o.Trace[second+1:] {
		if !strings.HasPrefix(l, " ") {
			break
		}
		if strings.Contains(l, "watch=true") {
			watches++
			if strings.Contains(l, "sendInitialEvents=true") {
				t.Errorf("after the second close-watch a reflector listed again: %s", strings.TrimSpace(l))
			}
		}
	}
	if watches != 3 {
		t.Errorf("after the second close-watch %d watches were made, want 3 (one a resource); what happened:\n%s", watches, strings.Join(o.Trace, "\n"))
	}
}
