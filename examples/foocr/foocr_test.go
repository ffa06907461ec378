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
	"github.com/cachelab/cachelab/examples/fooctl/footest"
)

func TestMain(m *testing.M) {
	klog.SetLogger(logr.Discard())
	ctrl.SetLogger(logr.Discard())
	os.Exit(m.Run())
}

func run(ctx context.Context, w *controllertest.World, mistaken bool) error {
	return foocr.Run(ctx, foocr.Options{Config: w.Config(), Clock: w.Clock(), Metrics: w.QueueMetrics(), Mistaken: mistaken})
}

// The fixed operator keeps every invariant under every placement of the
// default faults.
func TestFixedKeepsEveryInvariant(t *testing.T) { footest.FixedKeepsEveryInvariant(t, run) }

// Each mistake is found where explore finds it with the default faults
// (the benchmark explores it all). controller-runtime hands a delete
// handler the object a relist's tombstone holds, so a partition does not
// lose the registration here as it does in fooctl: a stop does, since a
// controller started after the delete hears nothing of it.
func TestMistakesAreFound(t *testing.T) {
	footest.MistakesAreFound(t, run, []footest.Found{
		{Placement: controllertest.Placement{}, Broken: []string{"no-duplicates"}},
		{Placement: controllertest.Placement{Fault: "partition", At: 4, Heal: 5}, Broken: []string{"no-duplicates"}},
		{Placement: controllertest.Placement{Fault: "stop", At: 4, Heal: 5}, Broken: []string{"no-duplicates", "registered"}},
	})
}

// BenchmarkExplore is fooctl's, for the controller-runtime operator:
//
//	go test ./examples/foocr -run XXX -bench Explore -benchtime 1x -v
func BenchmarkExplore(b *testing.B) { footest.BenchmarkExplore(b, run) }
