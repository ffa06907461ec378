package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cachelab/cachelab/internal/browsertest"
)

// explore --out writes the report as a page, index.html, that opens
// offline and links each group to its scenario file and its timeline;
// each timeline opens too, its run in view at 1280x800.
func TestExploreReportPage(t *testing.T) {
	ctx := browsertest.Start(t)
	dir := filepath.Join(t.TempDir(), "groups")
	c := newCLI("", false, nil)
	c.run(t, exitOK, "explore", "add-update-delete", "--faults", "close-watch,compact", "--out", dir)
	groups := strings.Count(c.stdout.String(), "        shortest: ")
	p := browsertest.Open(t, ctx, filepath.Join(dir, "index.html"))
	defer p.Close()
	p.NoErrors(t)
	p.Count(t, "tr.group", float64(groups))
	if got := p.Text(t, "#verdict"); !strings.Contains(got, "every placement agreed with client-go") {
		t.Errorf("verdict %q", got)
	}
	links := p.EvalString(t, `[...document.querySelectorAll("a.timeline, a.file")].map(a => a.getAttribute("href")).join("\n")`)
	for _, l := range strings.Split(links, "\n") {
		if _, err := os.Stat(filepath.Join(dir, l)); err != nil {
			t.Errorf("the page links to %s: %v", l, err)
		}
	}
	for _, l := range strings.Split(links, "\n") {
		if strings.HasSuffix(l, ".html") {
			p.Go(t, filepath.Join(dir, l))
			p.NoErrors(t)
			p.CheckFits(t, l)
		}
	}
}
