package sim

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/cachelab/cachelab/informer"
	"github.com/cachelab/cachelab/internal/browsertest"
	"github.com/cachelab/cachelab/internal/mermaiddraw"
	"github.com/cachelab/cachelab/internal/schemacheck"
	"github.com/cachelab/cachelab/sim/scenario"
	"github.com/cachelab/cachelab/sim/trace"
	"github.com/cachelab/cachelab/sim/trace/htmlview"
	"github.com/cachelab/cachelab/sim/trace/mermaid"
	"github.com/cockroachdb/datadriven"
)

// TestScenarios runs every built-in scenario (and every regression
// scenario, testdata/regress) as a walkthrough: each step's
// output (the world's lines and cachelab's trace) must match the file, and
// client-go must agree with cachelab at every step. Refresh the expected
// output with: go test ./sim -run TestScenarios -rewrite
//
// Each run is also written as --output json writes it, with both
// implementations' events, and every record must validate against
// sim/trace's schema: this is the schema test for every built-in
// scenario, at no cost beyond the runs the walkthroughs make anyway. And
// each built-in's run is drawn as its HTML page and opened in headless
// Chromium at 1280x800 (pagesFit). And the objects' stories must say the
// causes the trace shows (storiesTellCauses).
func TestScenarios(t *testing.T) {
	// Beside the other parallel tests once the serial ones have run
	// (parallel_test.go): its runs take their places among -parallel's.
	t.Parallel()
	files, err := filepath.Glob("scenarios/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	builtins := len(files)
	files = append(files, regressions(t)...)
	ran := make([]*htmlview.Run, builtins)
	t.Run("runs", func(t *testing.T) { // side by side (parallel_test.go)
		stackOfFile := func(i int) informer.Stack {
			sc, err := Load(files[i])
			if err != nil {
				t.Fatal(err)
			}
			return stackOf(sc)
		}
		for _, i := range inStackOrder(indices(len(files)), stackOfFile) {
			t.Run(filepath.Base(files[i]), func(t *testing.T) {
				parallelIn(t, stackOfFile(i))
				r := runScenarioFile(t, files[i])
				if i < builtins && !t.Failed() {
					ran[i] = &r
				}
			})
		}
	})
	var pages []htmlview.Run // in the catalog's order
	for _, r := range ran {
		if r != nil {
			pages = append(pages, *r)
		}
	}
	t.Run("every page fits at 1280x800", func(t *testing.T) { pagesFit(t, pages) })
	t.Run("Mermaid draws every diagram", func(t *testing.T) { diagramsDraw(t, pages) })
}

// diagramsDraw has a real Mermaid draw each run's diagram, as GitHub
// would (internal/mermaiddraw): each parses, and no note is cut off at
// the drawing's edge (issue 29).
func diagramsDraw(t *testing.T, runs []htmlview.Run) {
	if len(runs) == 0 {
		t.Skip("no built-in scenario ran")
	}
	js := mermaiddraw.Script(t)
	var diagrams []mermaiddraw.Diagram
	for _, r := range runs {
		diagrams = append(diagrams, mermaiddraw.Diagram{Where: r.Header.Scenario,
			Text: mermaid.Render(mermaid.Run{Header: r.Header, Steps: r.Steps}, mermaid.Options{})})
	}
	for _, p := range mermaiddraw.Problems(t, browsertest.Start(t), js, diagrams) {
		t.Error(p)
	}
}

// pagesFit opens each run's page in headless Chromium at laptop size,
// 1280x800, and checks that the whole run is in view: every step's column
// ends inside the timeline, which does not scroll sideways (issue 29).
func pagesFit(t *testing.T, runs []htmlview.Run) {
	if len(runs) == 0 {
		t.Skip("no built-in scenario ran")
	}
	ctx := browsertest.Start(t)
	dir := t.TempDir()
	var p *browsertest.Tab
	for _, r := range runs {
		file := filepath.Join(dir, r.Header.Scenario+".html")
		var b bytes.Buffer
		if err := htmlview.Write(&b, r); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		// One tab for all (a new tab costs seconds); the window size it
		// is given stays with it from page to page.
		if p == nil {
			p = browsertest.Open(t, ctx, file)
			p.Resize(t, 1280, 800)
		} else {
			p.Go(t, file)
		}
		p.CheckFits(t, r.Header.Scenario+" at 1280x800")
		p.NoErrors(t)
	}
}

// allScenarioFiles are every built-in scenario's file and every
// regression scenario's.
func allScenarioFiles(t *testing.T) []string {
	files, err := filepath.Glob("scenarios/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	return append(files, regressions(t)...)
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

// runScenarioFile plays a scenario file as a walkthrough and returns the
// run, as a page would draw it.
func runScenarioFile(t *testing.T, file string) htmlview.Run {
	sc, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	ses, err := Open(context.Background(), sc, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer ses.Close()
	var records bytes.Buffer
	run := htmlview.Run{Header: ses.Header()}
	jw := trace.NewJSONWriter(&records, "both")
	if err := jw.Header(ses.Header()); err != nil {
		t.Fatal(err)
	}
	i := 0
	datadriven.RunTest(t, file, func(t *testing.T, d *datadriven.TestData) string {
		if i >= len(sc.Steps) {
			t.Fatalf("%s: datadriven found more directives than scenario.Parse (%d)", d.Pos, len(sc.Steps))
		}
		st := sc.Steps[i]
		i++
		if st.Cmd != d.Cmd {
			t.Fatalf("%s: datadriven read command %q where scenario.Parse read %q", d.Pos, d.Cmd, st.Cmd)
		}
		sr, err := ses.Step(st)
		if err != nil {
			t.Fatal(err)
		}
		if sr.Divergence != nil {
			t.Errorf("%v", sr.Divergence)
		}
		if err := jw.Step(sr); err != nil {
			t.Fatal(err)
		}
		run.Steps = append(run.Steps, sr)
		return trace.StepOutput(sr)
	})
	if d := ses.Finish(); d != nil {
		t.Error(d)
	}
	checkJSON(t, &records, jw, sc, ses)
	storiesTellCauses(t, run)
	return run
}

// checkJSON ends a run's JSON records with a summary, as the CLI does for
// a run that agreed, and validates them all (internal/schemacheck).
func checkJSON(t *testing.T, records *bytes.Buffer, jw *trace.JSONWriter, sc *scenario.Scenario, ses *Session) {
	t.Helper()
	if t.Failed() {
		return // the run's own failure says more
	}
	s := trace.Summary{Scenario: sc.Name, Verdict: trace.VerdictAgreed, StepsTotal: len(sc.Steps)}
	s.SetClock(ses.Clock())
	if err := jw.Summary(s); err != nil {
		t.Fatal(err)
	}
	if err := schemacheck.Stream(records.Bytes()); err != nil {
		t.Errorf("--output json of %s: %v", sc.File, err)
	}
}
