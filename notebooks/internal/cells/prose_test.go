package cells

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cachelab/cachelab/internal/rvclaims"
	"github.com/cachelab/cachelab/sim"
)

var scenarioBlock = regexp.MustCompile(`<!-- scenario: ([A-Za-z0-9_-]+) -->`)

// The paragraph that introduces a quoted scenario in a chapter names only
// resourceVersions that scenario's trace shows, and a relist, re-watch or
// LIST at one only where the trace has it (issue 27, case 13; sim's
// TestDescriptionsNameWhatTheTraceShows holds the scenario files, and so
// the quotes, the same way).
func TestProseBeforeAScenario(t *testing.T) {
	readmes, err := filepath.Glob("../../[0-9]*/README.md")
	if err != nil || len(readmes) == 0 {
		t.Fatalf("no chapters: %v", err)
	}
	checked := 0
	for _, file := range readmes {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		text := string(src)
		for _, m := range scenarioBlock.FindAllStringSubmatchIndex(text, -1) {
			name := text[m[2]:m[3]]
			intro := lastParagraph(text[:m[0]])
			if intro == "" {
				continue
			}
			sc, err := sim.Load(filepath.Join("..", "..", "..", "sim", "scenarios", name+".txt"))
			if err != nil {
				t.Fatal(err)
			}
			var trace strings.Builder
			for _, st := range sc.Steps {
				trace.WriteString(st.Expected)
			}
			for _, p := range rvclaims.Check(intro, trace.String()) {
				t.Errorf("%s, before the scenario %s: %s", file, name, p)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no paragraph introduces a scenario: the chapters' markers changed shape")
	}
}

// lastParagraph is the prose paragraph that ends text, or "" when text
// ends with a block (a cell, a code fence) rather than prose.
func lastParagraph(text string) string {
	paras := strings.Split(strings.TrimRight(text, "\n"), "\n\n")
	p := paras[len(paras)-1]
	if strings.Contains(p, "```") || strings.Contains(p, "<!--") {
		return ""
	}
	return p
}
