package sim

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
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

// The sample in docs/over-the-wire.md is what the run prints: each of its
// trace lines is a line of add-update-delete's step 3 over the wire.
var sampleLine = regexp.MustCompile(`^  (request|wire|watch) +\S`)

func TestOverTheWirePageSampleIsCurrent(t *testing.T) {
	page, err := os.ReadFile("../docs/over-the-wire.md")
	if err != nil {
		t.Fatal(err)
	}
	sc, err := Load("scenarios/add-update-delete.txt")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), sc, Options{Seed: 1, Wire: true})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	trace.WriteStep(&b, res.Steps[2], trace.TextStyle{Impl: trace.Cachelab})
	printed := b.String()
	n, fenced := 0, false
	for _, l := range strings.Split(string(page), "\n") {
		if strings.HasPrefix(l, "```") {
			fenced = !fenced
			continue
		}
		if !fenced || !sampleLine.MatchString(l) {
			continue
		}
		n++
		if !strings.Contains(printed, l+"\n") {
			t.Errorf("docs/over-the-wire.md shows\n%s\nwhich step 3 does not print:\n%s", l, printed)
		}
	}
	if n < 3 {
		t.Errorf("found %d sample lines in docs/over-the-wire.md; the test expects the request, wire and watch lines", n)
	}
}
