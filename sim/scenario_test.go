package sim

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/cachelab/cachelab/sim/trace"
	"github.com/cockroachdb/datadriven"
)

// TestScenarios runs every built-in scenario (and every regression
// scenario, testdata/regress) as a walkthrough: each step's
// output (the world's lines and cachelab's trace) must match the file, and
// client-go must agree with cachelab at every step. Refresh the expected
// output with: go test ./sim -run TestScenarios -rewrite
func TestScenarios(t *testing.T) {
	files, err := filepath.Glob("scenarios/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	files = append(files, regressions(t)...)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) { runScenarioFile(t, file) })
	}
}

// regressions are the scenarios that once failed (most found by
// FuzzRunner): not walkthroughs for the catalog, but run and checked like
// them, in both stacks.
func regressions(t *testing.T) []string {
	files, err := filepath.Glob("testdata/regress/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no regression scenarios: %v", err)
	}
	return files
}

func runScenarioFile(t *testing.T, file string) {
	sc, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	ses, err := Open(context.Background(), sc, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer ses.Close()
	i := 0
	datadriven.RunTest(t, file, func(t *testing.T, d *datadriven.TestData) string {
		if i >= len(sc.Steps) {
			t.Fatalf("%s: datadriven found more directives than sim.Parse (%d)", d.Pos, len(sc.Steps))
		}
		st := sc.Steps[i]
		i++
		if st.Cmd != d.Cmd {
			t.Fatalf("%s: datadriven read command %q where sim.Parse read %q", d.Pos, d.Cmd, st.Cmd)
		}
		sr, err := ses.Step(st)
		if err != nil {
			t.Fatal(err)
		}
		if sr.Divergence != nil {
			t.Errorf("%v", sr.Divergence)
		}
		return trace.StepOutput(sr)
	})
	if d := ses.Finish(); d != nil {
		t.Error(d)
	}
}
