package mermaid_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cachelab/cachelab/internal/browsertest"
	"github.com/cachelab/cachelab/internal/mermaiddraw"
	"github.com/cachelab/cachelab/sim/trace/mermaid"
)

// The diagrams the project shows are drawn by a real Mermaid, as GitHub
// would draw them (internal/mermaiddraw): every diagram in the workshop's
// chapters and in docs/, the golden diagrams of testdata/, and the size
// guard's largest runs (issue 29). Validate checks the subset of Mermaid
// that Render writes; this checks that Mermaid itself parses each one and
// draws it whole, no note's words cut off at the drawing's edge. (sim's
// TestScenarios has Mermaid draw every built-in scenario's diagram.)
func TestMermaidDraws(t *testing.T) {
	js := mermaiddraw.Script(t)
	diagrams := shownDiagrams(t)
	for _, big := range []struct{ steps, objects int }{{1, 10000}, {100, 100}, {2000, 5}} {
		diagrams = append(diagrams, mermaiddraw.Diagram{Where: fmt.Sprintf("the size guard's run of %d steps of %d objects", big.steps, big.objects),
			Text: mermaid.Render(bigRun(big.steps, big.objects), mermaid.Options{})})
	}
	if len(diagrams) < 20 {
		t.Fatalf("found only %d diagrams to draw", len(diagrams))
	}
	// Two that must fail: the check would see a note cut off, or a
	// diagram Mermaid cannot parse.
	long := "sequenceDiagram\n    participant a as etcd\n    participant b as handler h1\n    Note over b: " +
		strings.Repeat("a note far too long for the room right of the last participant ", 5) + "\n"
	broken := "sequenceDiagram\n    participant a as etcd\n    a->>: no one\n"
	planted := []mermaiddraw.Diagram{{Where: "planted: a long note", Text: long}, {Where: "planted: a broken message", Text: broken}}
	problems := mermaiddraw.Problems(t, browsertest.Start(t), js, append(diagrams, planted...))
	caught := map[string]bool{}
	for _, p := range problems {
		if where, _, _ := strings.Cut(p, ": "); where == "planted" {
			caught[strings.SplitN(p, ": ", 3)[1]] = true
			continue
		}
		t.Error(p)
	}
	for _, d := range planted {
		if !caught[strings.TrimPrefix(d.Where, "planted: ")] {
			t.Errorf("%s: the check saw nothing wrong with it", d.Where)
		}
	}
	t.Logf("Mermaid drew %d diagrams", len(diagrams))
}

// shownDiagrams are the diagrams the project shows: every ```mermaid block
// in the workshop's chapters, the README and docs/, and testdata's goldens.
func shownDiagrams(t *testing.T) []mermaiddraw.Diagram {
	t.Helper()
	var files []string
	for _, pattern := range []string{"../../../notebooks/*.md", "../../../notebooks/*/README.md", "../../../docs/*.md", "../../../README.md", "testdata/*.mmd"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	var out []mermaiddraw.Diagram
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(f, "../../../")
		if strings.HasSuffix(f, ".mmd") {
			out = append(out, mermaiddraw.Diagram{Where: name, Text: string(b)})
			continue
		}
		lines := strings.Split(string(b), "\n")
		for i := 0; i < len(lines); i++ {
			if lines[i] != "```mermaid" {
				continue
			}
			start := i + 1
			for i++; i < len(lines) && lines[i] != "```"; i++ {
			}
			out = append(out, mermaiddraw.Diagram{Where: fmt.Sprintf("%s:%d", name, start), Text: strings.Join(lines[start:i], "\n") + "\n"})
		}
	}
	return out
}
