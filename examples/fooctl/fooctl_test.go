package fooctl_test

import (
	"context"
	"os"
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

// run runs the operator, Fixed or Mistaken (with its cleanup on delete).
func run(ctx context.Context, w *controllertest.World, mistaken bool) error {
	c, err := fooctl.Operator(fooctl.Options{Config: w.Config(), Clock: w.Clock(), Metrics: w.QueueMetrics()}, mistaken)
	if err != nil {
		return err
	}
	return c.Run(ctx)
}

// The fixed operator keeps every invariant under every placement of the
// default faults.
func TestFixedKeepsEveryInvariant(t *testing.T) { footest.FixedKeepsEveryInvariant(t, run) }

// Each mistake is found where explore finds it with the default faults
// (the benchmark explores it all): the duplicate child without faults at
// all, the lost registration where the Foo's delete reaches the
// controller only as a relist's tombstone (a partition) or not at all (a
// stop).
func TestMistakesAreFound(t *testing.T) {
	footest.MistakesAreFound(t, run, []footest.Found{
		{Placement: controllertest.Placement{}, Broken: []string{"no-duplicates"}},
		{Placement: controllertest.Placement{Fault: "partition", At: 4, Heal: 5}, Broken: []string{"no-duplicates", "registered"}},
		{Placement: controllertest.Placement{Fault: "stop", At: 4, Heal: 5}, Broken: []string{"no-duplicates", "registered"}},
	})
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
