package sim

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cachelab/cachelab/controller"
	"github.com/cachelab/cachelab/informer"
	"github.com/cachelab/cachelab/internal/golden"
	"github.com/cachelab/cachelab/sim/scenario"
	"github.com/cachelab/cachelab/sim/trace"
)

// The runner's comparison can fail: a cachelab trace altered in one line
// is reported at that step and layer, with a diff, and the run stops.
func TestDivergenceIsReported(t *testing.T) {
	sc, err := Load("add-update-delete")
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Seed: 1, tamper: func(e *trace.Event) {
		if e.Op == "OnUpdate" {
			e.Op = "OnAdd"
		}
	}}
	res, err := Run(context.Background(), sc, opts)
	if err != nil {
		t.Fatal(err)
	}
	d := res.Divergence
	if d == nil {
		t.Fatal("no divergence reported")
	}
	if d.Layer != "handler/h1" || !strings.HasPrefix(d.Cmd, "update ns0/a") || !strings.Contains(d.Diff, "OnUpdate") {
		t.Errorf("got divergence at step %d %q layer %q:\n%s", d.Step, d.Cmd, d.Layer, d.Diff)
	}
	if !strings.HasSuffix(d.Pos, "add-update-delete.txt:"+lineOf(t, sc, "update")) {
		t.Errorf("divergence position %q", d.Pos)
	}
	if last := res.Steps[len(res.Steps)-1]; last.Divergence != d || len(res.Steps) == len(sc.Steps) {
		t.Errorf("the run went on after the divergence: %d of %d steps", len(res.Steps), len(sc.Steps))
	}
}

func lineOf(t *testing.T, sc *scenario.Scenario, cmd string) string {
	for _, st := range sc.Steps {
		if st.Cmd == cmd {
			return strings.TrimPrefix(sc.Pos(st), sc.File+":")
		}
	}
	t.Fatalf("no %s step", cmd)
	return ""
}

// Both stacks agree on every scenario: each built-in (and regression)
// scenario also runs in
// the other stack, compared step by step against client-go (the expected
// output in the file is for the scenario's own stack, so it is not
// checked here).
func TestScenariosInTheOtherStack(t *testing.T) {
	// Beside the other parallel tests once the serial ones have run
	// (parallel_test.go): its runs take their places among -parallel's.
	t.Parallel()
	cat, err := Catalog()
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range regressions(t) {
		sc, err := Load(file)
		if err != nil {
			t.Fatal(err)
		}
		cat = append(cat, sc)
	}
	for _, sc := range inStackOrder(cat, otherStack) {
		t.Run(sc.Name, func(t *testing.T) {
			other := otherStack(sc)
			parallelIn(t, other)
			res, err := Run(context.Background(), sc, Options{Seed: 1, Stack: other})
			if err != nil {
				t.Fatal(err)
			}
			if res.Divergence != nil {
				t.Fatal(res.Divergence)
			}
			checkTrace(t, "other-stack", sc, res)
		})
	}
}

// checkTrace holds a run's trace (each step's world lines and cachelab's,
// as a scenario file's expected output holds them) against
// testdata/traces/<dir>/<name>.txt. The runs in the other stack and in
// the other world compare the two sides only, and two sides that lose
// the same race agree: the file is what catches a trace that changes from
// run to run there (issue 27, cases 4 and 5), at no cost beyond the runs.
// go test ./sim -run TestScenarios -rewrite rewrites the files.
func checkTrace(t *testing.T, dir string, sc *scenario.Scenario, res *Result) {
	t.Helper()
	var b strings.Builder
	for _, sr := range res.Steps {
		fmt.Fprintf(&b, "%s\n----\n%s\n", sr.Cmd, trace.StepOutput(sr))
	}
	rewrite := false
	if f := flag.Lookup("rewrite"); f != nil {
		rewrite = f.Value.String() == "true"
	}
	file := filepath.Join("testdata", "traces", dir, sc.Name+".txt")
	if rewrite {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	golden.Check(t, file, b.String(), rewrite, "the trace in "+dir)
}

func stackOf(sc *scenario.Scenario) informer.Stack {
	r := &runner{sc: sc}
	return r.stack()
}

// Every built-in scenario says which kube-apiserver it needs (its
// "# Server:" line), and each that means the same in both worlds (any)
// also runs in the world its expected output is not written for,
// compared step by step against client-go.
func TestScenariosInTheOtherWorld(t *testing.T) {
	cat, err := Catalog()
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range inStackOrder(cat, stackOf) {
		if sc.Server == "" {
			t.Errorf("%s: no \"# Server:\" line: say %s, %s or %s", sc.File, scenario.ServerEtcd, scenario.ServerWatchCache, scenario.ServerAny)
			continue
		}
		if sc.Server != scenario.ServerAny {
			continue
		}
		t.Run(sc.Name, func(t *testing.T) {
			other := scenario.ServerWatchCache
			if sc.WrittenFor() == scenario.ServerWatchCache {
				other = scenario.ServerEtcd
			}
			parallelIn(t, stackOf(sc))
			res, err := Run(context.Background(), sc, Options{Seed: 1, Server: other})
			if err != nil {
				t.Fatal(err)
			}
			if res.Divergence != nil {
				t.Fatal(res.Divergence)
			}
			checkTrace(t, "other-world", sc, res)
		})
	}
}

// A bug planted in cachelab's controller is caught in the layer where it
// shows: a loop that forgets to Forget, in the workqueue layer at the
// first success; a guard client-go's loop does not have, in the reconcile
// layer at the first stale read.
func TestControllerDivergenceIsReported(t *testing.T) {
	for _, tc := range []struct {
		scenario, layer, cmd, diff string
		plant                      func(*controller.Options)
	}{
		{"reconcile-backoff", trace.LayerWorkqueue, "start-controller", "forget", func(o *controller.Options) { o.SkipForget = true }},
		{"reconcile-stale-cache", trace.LayerReconcile, "advance 1s", "store@3 < wrote@4", func(o *controller.Options) { o.StalenessGuard = true }},
	} {
		t.Run(tc.scenario, func(t *testing.T) {
			wantDivergence(t, tc.scenario, Options{Seed: 1, ctlPlant: tc.plant}, tc.layer, tc.cmd, tc.diff)
		})
	}
}

// wantDivergence runs a built-in scenario with a bug planted (opts) and
// wants it caught at the step whose command is cmd, in layer, with a
// difference that says diff.
func wantDivergence(t *testing.T, scenario string, opts Options, layer, cmd, diff string) {
	t.Helper()
	sc, err := Load(scenario)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), sc, opts)
	if err != nil {
		t.Fatal(err)
	}
	d := res.Divergence
	if d == nil {
		t.Fatal("no divergence reported")
	}
	if d.Layer != layer || d.Cmd != cmd || !strings.Contains(d.Diff, diff) {
		t.Errorf("got divergence at step %d %q layer %q:\n%s", d.Step, d.Cmd, d.Layer, d.Diff)
	}
}
