package fooctl_test

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

	"github.com/cachelab/cachelab/controllertest"
	"github.com/cachelab/cachelab/examples/fooctl"
)

func TestMain(m *testing.M) {
	klog.SetLogger(logr.Discard()) // kube-apiserver's and client-go's logs, one world per placement
	os.Exit(m.Run())
}

// Invariants are the operator's own, over the world at the end.
var Invariants = []controllertest.Invariant{
	{Name: "registered", Check: func(e *controllertest.End) error { return fooctl.Registered(e.Objects) }},
	{Name: "colored", Check: func(e *controllertest.End) error { return fooctl.Colored(e.Objects) }},
}

// explorer is an exploration of the story with the operator, Fixed or
// Mistaken (with its cleanup on delete).
func explorer(t testing.TB, mistaken bool) controllertest.Explore {
	t.Helper()
	src, err := os.ReadFile("testdata/story.txt")
	if err != nil {
		t.Fatal(err)
	}
	story, err := controllertest.ParseStory("testdata/story.txt", src)
	if err != nil {
		t.Fatal(err)
	}
	return controllertest.Explore{
		Story:      story,
		World:      controllertest.Options{Resources: []string{"configmaps", "deployments"}},
		Controller: func(ctx context.Context, w *controllertest.World) error { return run(ctx, w, mistaken) },
		Namespaces: []string{fooctl.Registry},
		Unowned:    []string{fooctl.Registry},
		Invariants: Invariants,
		Jobs:       4,
	}
}

func run(ctx context.Context, w *controllertest.World, mistaken bool) error {
	opts := fooctl.Options{Config: w.Config(), Clock: w.Clock(), Metrics: w.QueueMetrics(), Reconcile: fooctl.Fixed}
	if mistaken {
		opts.Reconcile = fooctl.Mistaken
	}
	c, err := fooctl.New(opts)
	if err != nil {
		return err
	}
	if mistaken {
		if err := c.OnFooDelete(fooctl.MistakenCleanup(c)); err != nil {
			return err
		}
	}
	return c.Run(ctx)
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
		t.Errorf("the fixed operator:\n%s", rep)
	}
}

// Each mistake is found where explore finds it with the default faults
// (go test -bench Explore explores it all): the duplicate child without
// faults at all, the lost registration where the Foo's delete reaches
// the controller only as a relist's tombstone (a partition) or not at
// all (a stop).
func TestMistakesAreFound(t *testing.T) {
	e := explorer(t, true)
	for _, tc := range []struct {
		p    controllertest.Placement
		want []string
	}{
		{controllertest.Placement{}, []string{"no-duplicates"}},
		{controllertest.Placement{Fault: "partition", At: 4, Heal: 5}, []string{"no-duplicates", "registered"}},
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

// BenchmarkExplore explores the story with each reconcile under every
// placement of the default faults, prints each report, and reports how
// fast (placements/s) and at what CPU cost (cpu-ms/placement):
//
//	go test ./examples/fooctl -run XXX -bench Explore -benchtime 1x -v
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

// BenchmarkWorld is what a placement pays for a world of its own: an
// etcd, kube-apiserver and its watch caches started and stopped.
func BenchmarkWorld(b *testing.B) {
	c0 := cpuTime()
	for b.Loop() {
		w, err := controllertest.Start(context.Background(), controllertest.Options{Resources: []string{"configmaps", "deployments"}, CRDs: []string{fooctl.CRD}})
		if err != nil {
			b.Fatal(err)
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((cpuTime()-c0).Milliseconds())/float64(b.N), "cpu-ms/world")
}

// cpuTime is the CPU time (user and system) the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
