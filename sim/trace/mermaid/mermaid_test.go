package mermaid_test

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/cachelab/cachelab/internal/golden"
	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/sim/trace"
	"github.com/cachelab/cachelab/sim/trace/mermaid"
)

var update = flag.Bool("update", false, "rewrite testdata/*.mmd with what Render draws")

// The runs the goldens draw start etcd and two informers: each must stop
// everything it started.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// run plays a built-in scenario as `cachelab run NAME` does (seed 1, its
// own stack and server).
func run(t *testing.T, name string) mermaid.Run {
	t.Helper()
	sc, err := sim.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.Run(context.Background(), sc, sim.Options{Seed: 1})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return mermaid.Run{Header: res.Header, Steps: res.Steps}
}

// The diagrams of a few built-in scenarios, byte for byte: they are
// deterministic, as the text trace is, so `go test -count=20` draws the
// same ones. Each is valid Mermaid of the subset Render writes. Refresh
// with: go test ./sim/trace/mermaid -run TestGolden -update
func TestGolden(t *testing.T) {
	for _, tc := range []struct {
		golden, scenario, object string
		tweak                    func(*mermaid.Run)
	}{
		{golden: "add-update-delete", scenario: "add-update-delete"},
		{golden: "watch-errors", scenario: "watch-errors"}, // 429 and 500 answers, watches closed
		{golden: "relist-after-compaction", scenario: "relist-after-compaction"},
		{golden: "restart-etcd", scenario: "restart-etcd"},
		{golden: "coalescing-deltafifo-ns0-a", scenario: "coalescing-deltafifo", object: "ns0/a"},
		{golden: "diverged", scenario: "add-update-delete", tweak: divergeAtStep4},
		// Several informers, each its reflector, queue and indexer; two
		// named controllers, each its workqueue and worker.
		{golden: "factory-two-factories", scenario: "factory-two-factories"},
		{golden: "factory-shared-informer", scenario: "factory-shared-informer"},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			r := run(t, tc.scenario)
			if tc.tweak != nil {
				tc.tweak(&r)
			}
			got := mermaid.Render(r, mermaid.Options{Filter: trace.Filter{Object: tc.object}})
			if err := mermaid.Validate(got); err != nil {
				t.Fatalf("%v\n%s", err, got)
			}
			compare(t, filepath.Join("testdata", tc.golden+".mmd"), got)
		})
	}
}

// divergeAtStep4 makes the run end at step 4 with client-go's handler
// call different, as a divergence would.
func divergeAtStep4(r *mermaid.Run) {
	r.Steps = r.Steps[:4]
	r.Steps[3].Divergence = &trace.Divergence{Step: 4, Pos: r.Steps[3].Pos, Cmd: r.Steps[3].Cmd, Layer: "handler/h1",
		Diff: "-OnUpdate ns0/a@2 -> ns0/a@4\n+OnAdd    ns0/a@4\n"}
}

func compare(t *testing.T, file, got string) {
	t.Helper()
	golden.Check(t, file, got, *update, "the diagram")
}

// bigRun is a run no diagram can draw whole: steps steps, each writing
// objects objects that travel every layer to one handler, and a fault
// every tenth step.
func bigRun(steps, objects int) mermaid.Run {
	r := mermaid.Run{Header: trace.Header{Scenario: "big", Server: "watchcache"}}
	for s := 1; s <= steps; s++ {
		sr := trace.StepResult{Index: s, Pos: fmt.Sprintf("big.txt:%d", s), Cmd: "create-many", Sides: map[string][]trace.Event{}}
		if s%10 == 0 {
			sr.World = append(sr.World, trace.Event{Layer: trace.LayerSim, Kind: trace.KindWorld, Detail: "connection lost: watches dropped, new requests wait"})
		}
		for i := 0; i < objects; i++ {
			key, rv := fmt.Sprintf("ns0/o%d", i), fmt.Sprint(s*objects+i)
			sr.World = append(sr.World, trace.Event{Layer: trace.LayerEtcd, Kind: trace.KindWrite, Key: key, RV: rv, Op: "create"})
			sr.Sides[trace.Cachelab] = append(sr.Sides[trace.Cachelab],
				trace.Event{Layer: trace.LayerWatch, Kind: trace.KindEvent, Key: key, RV: rv, Op: "ADDED", Watch: "w1"},
				trace.Event{Layer: trace.LayerTransform, Kind: trace.KindEnqueue, Key: key, RV: rv, Detail: key + "@" + rv},
				trace.Event{Layer: trace.LayerPop, Kind: trace.KindPop, Key: key, RV: rv, Op: "Added", Detail: key + "@" + rv},
				trace.Event{Layer: trace.LayerIndexer, Kind: trace.KindStore, Key: key, RV: rv, Op: "add", Detail: key + "@" + rv},
				trace.Event{Layer: trace.HandlerLayer("h1"), Kind: trace.KindCall, Key: key, RV: rv, Op: "OnAdd", Handler: "h1"})
		}
		r.Steps = append(r.Steps, sr)
	}
	return r
}

// The size guard: a run far over GitHub's limits is drawn under them,
// aggregated, and says so; one step of 10,000 objects, and 2,000 steps.
func TestSizeGuard(t *testing.T) {
	for _, tc := range []struct {
		name           string
		steps, objects int
		want           []string
	}{
		{"small", 3, 2, nil},
		{"one step of 10000 objects", 1, 10000, []string{"aggregated to fit GitHub's Mermaid limits", "… 59,988 more events (9,998 etcd, 9,998 watch, 9,998 transform, 9,998 pop, 9,998 indexer, 9,998 handler/h1)"}},
		{"100 steps of 100 objects", 100, 100, []string{"aggregated to fit", "more events"}},
		{"2000 steps", 2000, 5, []string{"aggregated to fit", "not drawn: the diagram would be over GitHub's Mermaid limits"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := mermaid.Render(bigRun(tc.steps, tc.objects), mermaid.Options{})
			if err := mermaid.Validate(got); err != nil {
				t.Fatal(err)
			}
			if n := len(got); n > mermaid.DefaultBudget.Chars {
				t.Errorf("%d characters, over the budget of %d", n, mermaid.DefaultBudget.Chars)
			}
			if tc.want == nil && strings.Contains(got, "aggregated") {
				t.Errorf("a small run is aggregated:\n%s", got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("the diagram does not say %q:\n%.3000s", w, got)
				}
			}
			if got2 := mermaid.Render(bigRun(tc.steps, tc.objects), mermaid.Options{}); got2 != got {
				t.Error("two renderings of one run differ")
			}
		})
	}
}
