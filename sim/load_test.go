package sim

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cachelab/cachelab/internal/loadgen"
	"github.com/cachelab/cachelab/sim/scenario"
	"github.com/cachelab/cachelab/sim/trace"
)

// A verdict must not change with machine load (issue 47, case 2): the
// class of failure that kept coming back here, each time found by
// someone who happened to run beside a heavy process. This test looks
// for it on every CI run: a slice of the catalog (sample: another slice
// each day) runs beside a process that competes for the CPUs and the
// memory as a large run does (internal/loadgen), each scenario in its
// own world and, written for the watch cache, over the wire too; every
// step must print exactly its expected output, and client-go must agree.
// TestLateClockReads makes the same class certain where this one makes
// it likely; sim/explore's TestExploreUnderLoad does the same for an
// exploration's report.
func TestScenariosUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("runs beside a load process")
	}
	cat, err := Catalog()
	if err != nil {
		t.Fatal(err)
	}
	picked := sample(t, cat, 10)
	t.Logf("under load: %s", loadgen.String())
	loadgen.Start(t)
	for _, sc := range picked {
		t.Run(sc.Name, func(t *testing.T) { runUnderLoad(t, sc, Options{}) })
		if sc.WrittenFor() == scenario.ServerWatchCache {
			t.Run(sc.Name+"/over-the-wire", func(t *testing.T) { runUnderLoad(t, sc, Options{Wire: true}) })
		}
	}
}

// runUnderLoad runs sc and holds each step's output (without wire lines)
// to the file's expected output.
func runUnderLoad(t *testing.T, sc *scenario.Scenario, opts Options) {
	opts.Seed = 1
	res, err := Run(context.Background(), sc, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Divergence != nil {
		t.Fatal(res.Divergence)
	}
	var b strings.Builder
	for _, sr := range res.Steps {
		b.WriteString(trace.StepOutputWithout(sr, trace.LayerWire))
	}
	if d := cmp.Diff(expectedTrace(sc), b.String()); d != "" {
		t.Errorf("under load the trace differs from the file's (-file +under load):\n%s", d)
	}
}
