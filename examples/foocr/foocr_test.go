package foocr_test

import (
	"context"
	"os"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/cachelab/cachelab/controllertest"
	"github.com/cachelab/cachelab/examples/foocr"
	"github.com/cachelab/cachelab/examples/fooctl"
	"github.com/cachelab/cachelab/examples/fooctl/footest"
)

func TestMain(m *testing.M) {
	klog.SetLogger(logr.Discard())
	ctrl.SetLogger(logr.Discard())
	os.Exit(m.Run())
}

func run(ctx context.Context, w *controllertest.World, v fooctl.Variant) error {
	return foocr.Run(ctx, foocr.Options{Config: w.Config(), Clock: w.Clock(), Metrics: w.QueueMetrics(), Variant: v})
}

// The fixed operator keeps every invariant under every placement of the
// default faults.
func TestFixedKeepsEveryInvariant(t *testing.T) { footest.FixedKeepsEveryInvariant(t, run) }

// Each mistake is found where explore finds it with the default faults
// (the benchmark explores it all), or is not, where controller-runtime
// keeps the operator from it:
//
//   - controller-runtime hands a delete handler the object a relist's
//     tombstone holds, so a partition does not lose the registration
//     here as it does in fooctl: a stop does, since a controller started
//     after the delete hears nothing of it;
//   - the sweep (fooctl.MistakenSweep) deletes nothing: the cache's
//     reader waits for the Foos' informer to sync before it answers, so
//     a handler that reads it after a start sees the Foo (K10);
//   - the swallowed conflict (fooctl.Swallowing) loses no status: the
//     client leaves in the object it writes what the server stored, so
//     the status is written from the Foo as the finalizer's write left
//     it (K11). The next reconcile, from the cache, still meets a 409 on
//     the finalizer's write, after its own (no-stale-writes).
func TestMistakesAreFound(t *testing.T) {
	footest.MistakesAreFound(t, run, []footest.Found{
		{Variant: fooctl.Variant{Mistaken: true}, Broken: []string{"no-duplicates"}},
		{Variant: fooctl.Variant{Mistaken: true}, Placement: controllertest.Placement{Fault: "partition", At: 4, Heal: 5}, Broken: []string{"no-duplicates"}},
		{Variant: fooctl.Variant{Mistaken: true}, Placement: controllertest.Placement{Fault: "stop", At: 4, Heal: 5}, Broken: []string{"no-duplicates", "registered"}},
		{Variant: fooctl.Variant{Sweep: true}, Placement: controllertest.Placement{Fault: "stop", At: 3, Heal: 4}},
		{Variant: fooctl.Variant{Status: true, Swallow: true}, Broken: []string{"no-stale-writes"}},
	})
}

// BenchmarkExplore is fooctl's, for the controller-runtime operator:
//
//	go test ./examples/foocr -run XXX -bench Explore -benchtime 1x -v
func BenchmarkExplore(b *testing.B) { footest.BenchmarkExplore(b, run) }
