package foocr_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/cachelab/cachelab/controllertest"
	"github.com/cachelab/cachelab/examples/foocr"
	"github.com/cachelab/cachelab/examples/fooctl"
)

func TestMain(m *testing.M) {
	klog.SetLogger(logr.Discard())
	ctrl.SetLogger(logr.Discard())
	os.Exit(m.Run())
}

// explorer is an exploration of fooctl's story with the
// controller-runtime operator.
func explorer(t testing.TB, mistaken bool) controllertest.Explore {
	t.Helper()
	src, err := os.ReadFile("../fooctl/testdata/story.txt")
	if err != nil {
		t.Fatal(err)
	}
	story, err := controllertest.ParseStory("../fooctl/testdata/story.txt", src)
	if err != nil {
		t.Fatal(err)
	}
	return controllertest.Explore{
		Story: story,
		World: controllertest.Options{Resources: []string{"configmaps", "deployments"}},
		Controller: func(ctx context.Context, w *controllertest.World) error {
			return foocr.Run(ctx, foocr.Options{Config: w.Config(), Clock: w.Clock(), Metrics: w.QueueMetrics(), Mistaken: mistaken})
		},
		Namespaces: []string{fooctl.Registry},
		Unowned:    []string{fooctl.Registry},
		Invariants: []controllertest.Invariant{
			{Name: "registered", Check: func(e *controllertest.End) error { return fooctl.Registered(e.Objects) }},
			{Name: "colored", Check: func(e *controllertest.End) error { return fooctl.Colored(e.Objects) }},
		},
		Jobs: 4,
	}
}

// The fixed operator keeps every invariant under every placement of the
// default faults.
func TestFixedKeepsEveryInvariant(t *testing.T) {
	rep, err := explorer(t, false).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", rep)
	if rep.Failed() {
		t.Errorf("the fixed operator broke an invariant")
	}
}

// Each mistake is found where explore finds it with the default faults
// (go test -bench Explore explores it all). controller-runtime hands a
// delete handler the object a relist's tombstone holds, so a partition
// does not lose the registration here as it does in fooctl: a stop
// does, since a controller started after the delete hears nothing of it.
func TestMistakesAreFound(t *testing.T) {
	e := explorer(t, true)
	for _, tc := range []struct {
		p    controllertest.Placement
		want []string
	}{
		{controllertest.Placement{}, []string{"no-duplicates"}},
		{controllertest.Placement{Fault: "partition", At: 4, Heal: 5}, []string{"no-duplicates"}},
		{controllertest.Placement{Fault: "stop", At: 4, Heal: 5}, []string{"no-duplicates", "registered"}},
	} {
		o := e.Play(context.Background(), tc.p)
		var got []string
		for _, b := range o.Broken {
			got = append(got, b.Invariant)
		}
		if o.Err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%s: broke %v (error %v), want %v; what happened:\n%s", o.Where, got, o.Err, tc.want, strings.Join(o.Trace, "\n"))
		}
	}
}

// BenchmarkExplore is fooctl's, for the controller-runtime operator:
//
//	go test ./examples/foocr -run XXX -bench Explore -benchtime 1x -v
func BenchmarkExplore(b *testing.B) {
	for _, mistaken := range []bool{false, true} {
		name := map[bool]string{false: "fixed", true: "mistaken"}[mistaken]
		b.Run(name, func(b *testing.B) {
			var placed int
			t0, c0 := time.Now(), cpuTime()
			for b.Loop() {
				rep, err := explorer(b, mistaken).Run(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				placed += rep.Placements() + 1
				b.Logf("%s", rep)
			}
			took, cpu := time.Since(t0), cpuTime()-c0
			b.ReportMetric(float64(placed)/took.Seconds(), "placements/s")
			b.ReportMetric(float64(cpu.Milliseconds())/float64(placed), "cpu-ms/placement")
		})
	}
}

// cpuTime is the CPU time (user and system) the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
