package fooctl_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cachelab/cachelab/controllertest"
	"github.com/cachelab/cachelab/examples/fooctl"
	"github.com/cachelab/cachelab/examples/fooctl/footest"
)

// The operator as a binary of its own (cmd/fooctl), in another process,
// dialing the world over loopback TCP with a kubeconfig, meets the same
// faults as in the test's process and breaks the same invariants: the
// verdicts of each placement, in the process and outside, are compared.
//
// A few placements, not all: outside, a placement costs several times
// as much (a process started, client-go's relist backoffs waited out on
// the wall clock), and the full exploration is a benchmark
// (BenchmarkOutside).
func TestOutsideBreaksWhatInsideBreaks(t *testing.T) {
	bin := outsideBinary(t)
	places := []controllertest.Placement{
		{},                                   // Mistaken: a duplicate Deployment
		{Fault: "partition", At: 4, Heal: 5}, // Mistaken: the registration left behind
		{Fault: "stop", At: 4, Heal: 5},      // the same
	}
	for _, mistaken := range []bool{false, true} {
		in, out := footest.Explorer(t, run, fooctl.Variant{Mistaken: mistaken}), outside(t, bin, mistaken)
		for _, p := range places {
			if !mistaken && p.Fault == "stop" {
				continue // its cost, for a verdict the full exploration gives (BenchmarkOutside)
			}
			want, got := in.Play(context.Background(), p), out.Play(context.Background(), p)
			if got.Err != nil || want.Err != nil {
				t.Fatalf("mistaken=%v, %s: in the process: %v; outside: %v", mistaken, got.Where, want.Err, got.Err)
			}
			if diff := cmp.Diff(want.BrokenInvariants(), got.BrokenInvariants()); diff != "" {
				t.Errorf("mistaken=%v, %s: the invariants broken (-in the process +outside):\n%s", mistaken, got.Where, diff)
			}
			if os.Getenv("CACHELAB_LOG_TRACES") != "" {
				t.Logf("mistaken=%v, %s, outside:\n%s", mistaken, got.Where, strings.Join(got.Trace, "\n"))
			}
			if !mistaken && len(got.Broken) > 0 {
				t.Errorf("Fixed, %s, outside: broke %v", got.Where, got.Broken)
			}
			if mistaken && len(got.Broken) == 0 {
				t.Errorf("Mistaken, %s, outside: broke nothing", got.Where)
			}
		}
	}
}

// BenchmarkOutside explores the story with the operator in another
// process, every placement of the default faults, as
// BenchmarkExplore does in the test's process.
func BenchmarkOutside(b *testing.B) {
	bin := outsideBinary(b)
	for _, mistaken := range []bool{false, true} {
		name := map[bool]string{false: "fixed", true: "mistaken"}[mistaken]
		b.Run(name, func(b *testing.B) {
			for range b.N {
				rep, err := outside(b, bin, mistaken).Run(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(rep.Placements()), "placements/op")
				if testing.Verbose() {
					b.Log(rep)
				}
			}
		})
	}
}

// outsideBinary builds cmd/fooctl, the operator as a binary of its own.
func outsideBinary(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "fooctl")
	out, err := exec.Command("go", "build", "-o", bin, "./cmd/fooctl").CombinedOutput()
	if err != nil {
		t.Fatalf("go build ./cmd/fooctl: %v\n%s", err, out)
	}
	return bin
}

// outside is an exploration of the story with the operator in another
// process, started from its binary in each placement's world.
func outside(t testing.TB, bin string, mistaken bool) controllertest.Explore {
	e := footest.Explorer(t, run, fooctl.Variant{Mistaken: mistaken})
	args := []string{bin}
	if mistaken {
		args = append(args, "-mistaken")
	}
	e.Controller = controllertest.Command(args, controllertest.CommandOptions{})
	e.World.Outside = &controllertest.Outside{}
	return e
}
