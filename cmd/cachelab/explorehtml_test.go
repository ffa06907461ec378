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
	inProcess(t) // beside the scripts (places_test.go)
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

// A group's timeline says what it is (issue 47, case 14): its title is
// the group's story, not the explored scenario's claim (no tombstone
// happens in "an object is never seen"); it shows where the faults went,
// numbers its steps as the report does (the scenario's own, a fault
// explore put in marked +), and shows the scenario's run without faults
// beside the group's, the run its story is told against.
func TestExploreGroupPageSaysWhatItExplored(t *testing.T) {
	inProcess(t) // beside the scripts (places_test.go)
	ctx := browsertest.Start(t)
	dir := filepath.Join(t.TempDir(), "groups")
	c := newCLI("", false, nil)
	c.run(t, exitOK, "explore", "missed-delete-tombstone", "--faults", "disconnect", "--out", dir)
	pages, err := filepath.Glob(filepath.Join(dir, "missed-delete-tombstone-*-an-object-is-never-seen-*.html"))
	if err != nil || len(pages) != 1 {
		t.Fatalf("the never-seen group's page: %v %v\n%s", pages, err, c.stdout.String())
	}
	p := browsertest.Open(t, ctx, pages[0])
	defer p.Close()
	p.Resize(t, 1280, 800)
	p.NoErrors(t)
	p.CheckFits(t, "the never-seen group's page at 1280x800")
	for _, what := range []string{"document.title", `document.querySelector("h1").textContent`} {
		title := p.EvalString(t, what)
		if !strings.Contains(title, "an object is never seen") || strings.Contains(title, "DeletedFinalStateUnknown") {
			t.Errorf("%s = %q: want the group's story, not the scenario's claim", what, title)
		}
	}
	const placement = "disconnect before step 3 (start), reconnect before step 7 (create ns0/c)"
	if !strings.Contains(c.stdout.String(), "shortest: "+placement+"\n") {
		t.Fatalf("the report's shortest placement of the group is not %q:\n%s", placement, c.stdout.String())
	}
	if got := p.Text(t, "#explored"); !strings.Contains(got, placement) || !strings.Contains(got, "steps numbered as in missed-delete-tombstone") {
		t.Errorf("the page's placement line reads %q, want %q and its numbering", got, placement)
	}
	// The scenario's steps 1-9 with the disconnect put before 3 and the
	// reconnect before 7.
	if got := p.EvalString(t, `[...document.querySelectorAll(".step b")].map(b => b.textContent.trim()).join(" ")`); got != "1 2 + 3 4 5 6 + 7 8 9" {
		t.Errorf("the steps are numbered %q, want the scenario's (1 2 + 3 4 5 6 + 7 8 9)", got)
	}
	// Without faults, step 9's relist hands on b's tombstone; with them,
	// b is never seen.
	without := p.EvalString(t, `[...document.querySelectorAll(".impl-without-faults .chip")].map(c => c.textContent).join("\n")`)
	if !strings.Contains(without, "OnDelete b tombstone") || !strings.Contains(without, "OnAdd b@3") {
		t.Errorf("the lanes without faults read:\n%s\nwant the scenario's own calls: b's OnAdd, its tombstone", without)
	}
	if with := p.EvalString(t, `[...document.querySelectorAll(".impl-cachelab .chip.k-call")].map(c => c.textContent).join("\n")`); strings.Contains(with, " b@") || strings.Contains(with, " b ") {
		t.Errorf("the group's own run names b, which it never sees:\n%s", with)
	}
}
