// Package footest is what the tests of package fooctl's operator and of
// package foocr's share: the story they explore, the operator's
// invariants, the checks that the fixed operator keeps them and that
// each mistake is found, and the exploration as a benchmark. Each
// flavour gives only how its operator runs in a world.
package footest

import (
	"context"
	_ "embed"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cachelab/cachelab/controllertest"
	"github.com/cachelab/cachelab/examples/fooctl"
)

// StoryFile is the story both flavours are explored with: a Foo made,
// its color changed, and deleted.
//
//go:embed story.txt
var StoryFile string

// Run runs an operator, fixed or mistaken, in w until ctx ends.
type Run func(ctx context.Context, w *controllertest.World, mistaken bool) error

// Invariants are the operator's own, over the world at the end.
var Invariants = []controllertest.Invariant{
	{Name: "registered", Check: func(e *controllertest.End) error { return fooctl.Registered(e.Objects) }},
	{Name: "colored", Check: func(e *controllertest.End) error { return fooctl.Colored(e.Objects) }},
}

// Explorer is an exploration of the story with the operator run by run,
// fixed or mistaken.
func Explorer(t testing.TB, run Run, mistaken bool) controllertest.Explore {
	t.Helper()
	story, err := controllertest.ParseStory("footest/story.txt", []byte(StoryFile))
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

// FixedKeepsEveryInvariant explores the fixed operator under every
// placement of the default faults, and fails t if it breaks an
// invariant anywhere.
func FixedKeepsEveryInvariant(t *testing.T, run Run) {
	rep, err := Explorer(t, run, false).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", rep)
	if rep.Failed() {
		t.Errorf("the fixed operator broke an invariant")
	}
}

// Found is a placement and the invariants the mistaken operator breaks
// there.
type Found struct {
	Placement controllertest.Placement
	Broken    []string
}

// MistakesAreFound plays the mistaken operator at each placement, and
// fails t where it does not break what is said.
func MistakesAreFound(t *testing.T, run Run, found []Found) {
	e := Explorer(t, run, true)
	for _, f := range found {
		o := e.Play(context.Background(), f.Placement)
		var got []string
		for _, b := range o.Broken {
			got = append(got, b.Invariant)
		}
		if o.Err != nil || !slices.Equal(got, f.Broken) {
			t.Errorf("%s: broke %v (error %v), want %v; what happened:\n%s", o.Where, got, o.Err, f.Broken, strings.Join(o.Trace, "\n"))
		}
	}
}

// BenchmarkExplore explores the story with each operator under every
// placement of the default faults, logs each report, and reports how
// fast (placements/s) and at what CPU cost (cpu-ms/placement).
func BenchmarkExplore(b *testing.B, run Run) {
	for _, mistaken := range []bool{false, true} {
		name := map[bool]string{false: "fixed", true: "mistaken"}[mistaken]
		b.Run(name, func(b *testing.B) {
			var placed int
			t0, c0 := time.Now(), CPUTime()
			for b.Loop() {
				rep, err := Explorer(b, run, mistaken).Run(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				placed += rep.Placements() + 1
				b.Logf("%s", rep)
			}
			took, cpu := time.Since(t0), CPUTime()-c0
			b.ReportMetric(float64(placed)/took.Seconds(), "placements/s")
			b.ReportMetric(float64(cpu.Milliseconds())/float64(placed), "cpu-ms/placement")
		})
	}
}

// CPUTime is the CPU time (user and system) the process has used.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
