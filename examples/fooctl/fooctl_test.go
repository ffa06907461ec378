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
func run(ctx context.Context, w *controllertest.World, v fooctl.Variant) error {
	c, err := fooctl.Make(fooctl.Options{Config: w.Config(), Clock: w.Clock(), Metrics: w.QueueMetrics()}, v)
	if err != nil {
		return err
	}
	return c.Run(ctx)
}

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
	var got []string
	for _, b := range o.Broken {
		got = append(got, b.Invariant)
	}
	if o.Err != nil || !slices.Equal(got, []string{"no-stale-writes"}) {
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
