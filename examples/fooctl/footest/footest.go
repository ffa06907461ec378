// Package footest is what the tests of package fooctl's operator and of
// package foocr's share: the story they explore, the operator's
// invariants, the checks that the fixed operator keeps them and that
// each mistake is found, and the exploration as a benchmark. Each
// flavour gives only how its operator runs in a world.
package footest

import (
	"context"
	_ "embed"
	"fmt"
	"net/http"
	pathpkg "path"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cachelab/cachelab/controllertest"
	"github.com/cachelab/cachelab/examples/fooctl"
)

// StoryFile is the story both flavours are explored with: a Foo made,
// its color changed, and deleted.
//
//go:embed story.txt
var StoryFile string

// StatusStoryFile is the story an operator that reports each Foo's
// color in its status (fooctl.Options.Status) is explored with: a Foo
// made, and nothing after that would wake the operator again.
//
//go:embed status.txt
var StatusStoryFile string

// Run runs the operator v says in w until ctx ends.
type Run func(ctx context.Context, w *controllertest.World, v fooctl.Variant) error

// Invariants are the operator's own, over the world at the end.
var Invariants = []controllertest.Invariant{
	{Name: "registered", Check: func(e *controllertest.End) error { return fooctl.Registered(e.Objects) }},
	{Name: "colored", Check: func(e *controllertest.End) error { return fooctl.Colored(e.Objects) }},
}

// Kept: the controller deleted no child (a ConfigMap or Deployment
// outside the registry) of a Foo that was still there: it made one
// again in the child's place afterwards (a POST of the resource in the
// child's namespace, each Foo having one of each). The garbage
// collector takes the children of a Foo that has gone; a controller
// that deletes the child of a live one replaces it, and every pod of a
// Deployment with it (fooctl.MistakenSweep).
var Kept = controllertest.Invariant{Name: "kept", Check: func(e *controllertest.End) error {
	deleted := map[string]string{} // collection: the child deleted from it
	for _, r := range e.Requests {
		path, _, _ := strings.Cut(r.URI, "?")
		if r.Status >= 300 || strings.Contains(path, "/namespaces/"+fooctl.Registry+"/") ||
			!strings.Contains(path, "/configmaps") && !strings.Contains(path, "/deployments") {
			continue
		}
		switch r.Method {
		case http.MethodDelete:
			collection, _ := pathpkg.Split(path)
			deleted[strings.TrimSuffix(collection, "/")] = path
		case http.MethodPost:
			if child, ok := deleted[path]; ok {
				return fmt.Errorf("the controller deleted %s, and made it again: the child of a Foo that was still there", child)
			}
		}
	}
	return nil
}}

// Reported: each Foo's status says its color (fooctl.Options.Status).
var Reported = controllertest.Invariant{Name: "reported", Check: func(e *controllertest.End) error {
	for _, f := range e.Objects["foos"] {
		color, _ := fooctl.Spec(&f)
		if got, _, _ := unstructured.NestedString(f.Object, "status", "color"); got != color {
			return fmt.Errorf("Foo %s/%s is %s; its status says %q", f.GetNamespace(), f.GetName(), color, got)
		}
	}
	return nil
}}

// Explorer is ExplorerOf, failing t if the story does not parse.
func Explorer(t testing.TB, run Run, v fooctl.Variant) controllertest.Explore {
	t.Helper()
	e, err := ExplorerOf(run, v)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// ExplorerOf is an exploration of the operator v says, run by run: of
// StoryFile with Invariants and Kept, or, with v.Status, of
// StatusStoryFile with Reported too.
func ExplorerOf(run Run, v fooctl.Variant) (controllertest.Explore, error) {
	name, src, invariants := "footest/story.txt", StoryFile, append(slices.Clip(Invariants), Kept)
	if v.Status {
		name, src, invariants = "footest/status.txt", StatusStoryFile, append(invariants, Reported)
	}
	story, err := controllertest.ParseStory(name, []byte(src))
	if err != nil {
		return controllertest.Explore{}, err
	}
	return controllertest.Explore{
		Story:      story,
		World:      controllertest.Options{Resources: []string{"configmaps", "deployments"}},
		Controller: func(ctx context.Context, w *controllertest.World) error { return run(ctx, w, v) },
		Namespaces: []string{fooctl.Registry},
		Unowned:    []string{fooctl.Registry},
		Invariants: invariants,
		Jobs:       4,
	}, nil
}

// Fooctl runs package fooctl's operator, the one v says, in w.
func Fooctl(ctx context.Context, w *controllertest.World, v fooctl.Variant) error {
	c, err := fooctl.Make(fooctl.Options{Config: w.Config(), Clock: w.Clock(), Metrics: w.QueueMetrics()}, v)
	if err != nil {
		return err
	}
	return c.Run(ctx)
}

// FixedKeepsEveryInvariant explores the fixed operator under every
// placement of the default faults, of each story (fooctl.Variant's
// Status or not), and fails t if it breaks an invariant anywhere.
func FixedKeepsEveryInvariant(t *testing.T, run Run) {
	for _, v := range []fooctl.Variant{{}, {Status: true}} {
		t.Run(v.String(), func(t *testing.T) {
			rep, err := Explorer(t, run, v).Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s", rep)
			if rep.Failed() {
				t.Errorf("the fixed operator broke an invariant")
			}
		})
	}
}

// Found is an operator with mistakes, a placement, and the invariants
// the operator breaks there.
type Found struct {
	Variant   fooctl.Variant
	Placement controllertest.Placement
	Broken    []string
}

// MistakesAreFound plays each operator at its placement, and fails t
// where it does not break what is said.
func MistakesAreFound(t *testing.T, run Run, found []Found) {
	for _, f := range found {
		e := Explorer(t, run, f.Variant)
		o := e.Play(context.Background(), f.Placement)
		if got := o.BrokenInvariants(); o.Err != nil || !slices.Equal(got, f.Broken) {
			t.Errorf("%s, %s: broke %v (error %v), want %v; what happened:\n%s", f.Variant, o.Where, got, o.Err, f.Broken, strings.Join(o.Trace, "\n"))
		}
	}
}

// Variants are the operators explored: fixed and with each mistake, on
// each story.
var Variants = []fooctl.Variant{{}, {Mistaken: true}, {Sweep: true}, {Status: true}, {Status: true, Swallow: true}}

// BenchmarkExplore explores the story with each operator under every
// placement of the default faults, logs each report, and reports how
// fast (placements/s) and at what CPU cost (cpu-ms/placement).
func BenchmarkExplore(b *testing.B, run Run) {
	for _, v := range Variants {
		b.Run(v.String(), func(b *testing.B) {
			var placed int
			t0, c0 := time.Now(), CPUTime()
			for b.Loop() {
				rep, err := Explorer(b, run, v).Run(context.Background())
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
