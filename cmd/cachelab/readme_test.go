package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// docs/reading-a-trace.md quotes the end of `cachelab run
// relist-after-compaction` and explains it line by line. The quote must be what the command prints
// today: its step header, file:line included, and every line in order,
// where a line "  ..." stands for lines left out.
func TestReadmeQuotesTheRun(t *testing.T) {
	readme, err := os.ReadFile("../../docs/reading-a-trace.md")
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
			t.Fatalf("docs/reading-a-trace.md quotes a line the run does not print there:\n%s\nthe run prints:\n%s", q, c.stdout.String())
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
	t.Fatalf("no quote from %q to %q", first, last)
	return nil
}

// docs/output.md shows the diagram of a run: it must be what the command
// its marker names draws today, byte for byte.
func TestReadmeDiagram(t *testing.T) {
	readme, err := os.ReadFile("../../docs/output.md")
	if err != nil {
		t.Fatal(err)
	}
	const marker = "<!-- cachelab run relist-after-compaction --output mermaid --object ns0/a -->\n```mermaid\n"
	_, block, ok := strings.Cut(string(readme), marker)
	if !ok {
		t.Fatalf("docs/output.md has no %q", marker)
	}
	block, _, _ = strings.Cut(block, "```\n")
	c := newCLI("", false, nil)
	c.run(t, exitOK, "run", "relist-after-compaction", "--output", "mermaid", "--object", "ns0/a")
	if got := c.stdout.String(); got != block {
		t.Errorf("docs/output.md's diagram is not what the run draws; the run draws:\n%s", got)
	}
}

// The README keeps to what cachelab is, the two commands a newcomer needs,
// one picture and where to go next; the rest is in docs/ (issue 29). Every
// relative link in it and in docs/ leads to a file that exists (and an
// anchor to a heading there), and every page of docs/ is reached from it.
func TestDocsLinks(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(readme), "\n"); n > 100 {
		t.Errorf("README.md has %d lines, want at most 100: move the rest to a page under docs/", n)
	}
	for _, cmd := range []string{"go run ./cmd/cachelab run relist-after-compaction\n", "go test -p 3 -race -timeout 20m ./sim ./cmd/cachelab ./sim/explore ./notebooks/09-exploring ./...\n"} {
		if !strings.Contains(string(readme), "```\n"+cmd+"```") {
			t.Errorf("README.md does not show the command %q in a code block of its own", strings.TrimSpace(cmd))
		}
	}
	pages, err := filepath.Glob("../../docs/*.md")
	if err != nil || len(pages) == 0 {
		t.Fatalf("no pages under docs/ (%v)", err)
	}
	linked := map[string]bool{}
	for _, file := range append([]string{"../../README.md"}, pages...) {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(file, "../../")
		for _, m := range mdLink.FindAllStringSubmatch(stripCode(string(text)), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			dest := file
			if path != "" {
				dest = filepath.Join(filepath.Dir(file), path)
			}
			if _, err := os.Stat(dest); err != nil {
				t.Errorf("%s links to %s, which does not exist", name, target)
				continue
			}
			if name == "README.md" {
				linked[filepath.Clean(dest)] = true
			}
			if anchor != "" && strings.HasSuffix(dest, ".md") {
				body, _ := os.ReadFile(dest)
				if !hasAnchor(string(body), anchor) {
					t.Errorf("%s links to %s, but %s has no heading #%s", name, target, dest, anchor)
				}
			}
		}
	}
	for _, p := range pages {
		if !linked[filepath.Clean(p)] {
			t.Errorf("README.md does not link to %s: a newcomer would not find it", strings.TrimPrefix(p, "../../"))
		}
	}
}

var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// stripCode drops fenced code blocks, whose brackets are not links.
func stripCode(s string) string {
	var b strings.Builder
	in := false
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "```") {
			in = !in
			continue
		}
		if !in {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// hasAnchor reports whether markdown text has a heading whose GitHub
// anchor is anchor: lower case, spaces as dashes, punctuation dropped.
func hasAnchor(text, anchor string) bool {
	for _, l := range strings.Split(text, "\n") {
		h := strings.TrimLeft(l, "#")
		if h == l || !strings.HasPrefix(h, " ") {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(h)) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		if b.String() == anchor {
			return true
		}
	}
	return false
}
