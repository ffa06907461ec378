package sim

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/cachelab/cachelab/sim/scenario"
	"github.com/cachelab/cachelab/sim/trace"
)

// Over the wire (--server apiserver) every built-in scenario written for
// the watch cache runs with both informers reaching kube-apiserver over
// HTTPS, each through its own implementation's HTTP client. Two things
// are checked at every step: cachelab and client-go agree, the wire
// lines (each try of each request, H1-H7) included; and the story is the
// one the scenario tells in process: its expected output, once the wire
// lines are taken out, is what it printed. The wire adds requests on a
// socket, not a different world.
func TestScenariosOverTheWire(t *testing.T) {
	files, err := filepath.Glob("scenarios/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	for _, file := range files {
		sc, err := Load(file)
		if err != nil {
			t.Fatal(err)
		}
		if sc.WrittenFor() != scenario.ServerWatchCache || !overTheWire(sc) {
			continue
		}
		t.Run(filepath.Base(file), func(t *testing.T) { runOverTheWire(t, file, sc) })
	}
}

// overTheWire reports whether a scenario means the same over the wire.
func overTheWire(sc *scenario.Scenario) bool { return true }

func startsAnInformer(sc *scenario.Scenario) bool {
	for _, st := range sc.Steps {
		if strings.HasPrefix(st.Cmd, "start") || st.Cmd == "add-informer" {
			return true
		}
	}
	return false
}

func runOverTheWire(t *testing.T, file string, sc *scenario.Scenario) {
	ses, err := Open(context.Background(), sc, Options{Seed: 1, Wire: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ses.Close()
	i, wireLines := 0, 0
	datadriven.RunTest(t, file, func(t *testing.T, d *datadriven.TestData) string {
		st := sc.Steps[i]
		i++
		sr, err := ses.Step(st)
		if err != nil {
			t.Fatal(err)
		}
		if sr.Divergence != nil {
			t.Errorf("%v", sr.Divergence)
		}
		for _, e := range sr.Sides[trace.Cachelab] {
			if e.Layer == trace.LayerWire {
				wireLines++
			}
		}
		return trace.StepOutputWithout(sr, trace.LayerWire)
	})
	if d := ses.Finish(); d != nil {
		t.Error(d)
	}
	if wireLines == 0 && startsAnInformer(sc) {
		t.Errorf("no wire line in a run whose informer started")
	}
}
