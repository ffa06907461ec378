package main

import (
	"os"
	"strings"
	"testing"
)

// README.md quotes the end of `cachelab run relist-after-compaction` and
// explains it line by line. The quote must be what the command prints
// today: its step header, file:line included, and every line in order,
// where a line "  ..." stands for lines left out.
func TestReadmeQuotesTheRun(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	quote := readmeQuote(t, string(readme), "── step 9: reconnect", "  ✓ client-go agrees")
	c := newCLI("", false, nil)
	c.run(t, exitOK, "run", "relist-after-compaction")
	out := strings.Split(c.stdout.String(), "\n")

	// The step header may be anywhere; each line after it comes next,
	// or, after "  ...", later in the same step.
	i := 0
	for i < len(out) && out[i] != quote[0] {
		i++
	}
	skipping := false
	for _, q := range quote {
		if q == "  ..." {
			skipping = true
			continue
		}
		for skipping && i < len(out) && out[i] != q && !strings.HasPrefix(out[i], "── ") {
			i++
		}
		if i >= len(out) || out[i] != q {
			t.Fatalf("README.md quotes a line the run does not print there:\n%s\nthe run prints:\n%s", q, c.stdout.String())
		}
		i++
		skipping = false
	}
}

// readmeQuote returns the lines of the code block in text that begins
// with the line first and ends with the line last.
func readmeQuote(t *testing.T, text, first, last string) []string {
	t.Helper()
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, first) {
			continue
		}
		for j := i; j < len(lines) && lines[j] != "```"; j++ {
			if lines[j] == last {
				return lines[i : j+1]
			}
		}
	}
	t.Fatalf("README.md has no quote from %q to %q", first, last)
	return nil
}

// README.md shows the diagram of a run: it must be what the command its
// marker names draws today, byte for byte.
func TestReadmeDiagram(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	const marker = "<!-- cachelab run relist-after-compaction --output mermaid --object ns0/a -->\n```mermaid\n"
	_, block, ok := strings.Cut(string(readme), marker)
	if !ok {
		t.Fatalf("README.md has no %q", marker)
	}
	block, _, _ = strings.Cut(block, "```\n")
	c := newCLI("", false, nil)
	c.run(t, exitOK, "run", "relist-after-compaction", "--output", "mermaid", "--object", "ns0/a")
	if got := c.stdout.String(); got != block {
		t.Errorf("README.md's diagram is not what the run draws; the run draws:\n%s", got)
	}
}
