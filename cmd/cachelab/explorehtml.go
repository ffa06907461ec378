package main

import (
	"context"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"strings"

	"github.com/cachelab/cachelab/informer"
	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/sim/explore"
	"github.com/cachelab/cachelab/sim/scenario"
	"github.com/cachelab/cachelab/sim/trace"
	"github.com/cachelab/cachelab/sim/trace/htmlview"
)

// The exploration as pages, written with the groups' files (--out DIR):
// index.html, the report (each group: its size as a bar, its story, its
// shortest placement, and links to its scenario file and its timeline),
// and one timeline page per group, the run of its file (htmlview), so
// that a group's story can be read step by step. Every page is one file
// that opens offline.

// writeGroupPages writes each group's timeline (its file, run again with
// runs' options and the record's: a run is deterministic, so it is the
// run explore saw) and index.html. Each timeline says what was explored
// and shows, beside the group's run, the scenario's run without faults
// (htmlview.Explored).
func writeGroupPages(ctx context.Context, rec explore.Record, groups []explore.RecordGroup, files map[int]string, dir string, runs sim.Options) error {
	runs = exploredRunOptions(rec, runs)
	sc, baseline := withoutFaults(ctx, rec, runs)
	pages := map[int]string{}
	for i, g := range groups {
		name := strings.TrimSuffix(files[i], ".txt") + ".html"
		x := htmlview.Explored{Scenario: rec.Scenario, Group: fmt.Sprintf("group %d: %s", i+1, g.Label), Placement: g.Outcomes[0].Placement, Baseline: baseline}
		if sc != nil {
			for _, c := range (scenario.Placement{Faults: g.Outcomes[0].Faults}).Placed(sc) {
				x.Steps = append(x.Steps, c.Step)
			}
		}
		if err := writeTimeline(ctx, g, x, name, runs); err != nil {
			return fmt.Errorf("the timeline of group %d (%s): %w", i+1, g.Label, err)
		}
		pages[i] = name
	}
	return writeIndex(rec, groups, files, pages, filepath.Join(dir, "index.html"))
}

// exploredRunOptions are runs (where the runs' etcds keep their data,
// for a signal to remove) with the options every run of the exploration
// had.
func exploredRunOptions(rec explore.Record, runs sim.Options) sim.Options {
	runs.Stack, runs.Server, runs.Seed, runs.Plant = informer.Stack(rec.Stack), rec.Server, rec.Seed, rec.Plant
	return runs
}

// withoutFaults is the scenario explored and its run without faults, as
// explore ran it first; nil where it cannot be had (explore merge, given
// the records of a scenario file that is not where they say): the pages
// then say so.
func withoutFaults(ctx context.Context, rec explore.Record, runs sim.Options) (*scenario.Scenario, []trace.StepResult) {
	sc, err := sim.Load(rec.Scenario)
	if err != nil {
		return nil, nil
	}
	res, err := sim.Run(ctx, sc.WithoutExpectations(), runs)
	if err != nil {
		return sc, nil
	}
	return sc, res.Steps
}

func writeTimeline(ctx context.Context, g explore.RecordGroup, x htmlview.Explored, name string, runs sim.Options) error {
	sc, err := scenario.Parse(strings.TrimSuffix(filepath.Base(name), ".html")+".txt", []byte(g.Outcomes[0].Minimal))
	if err != nil {
		return err
	}
	res, err := sim.Run(ctx, sc, runs)
	if err != nil {
		return err
	}
	x.Title = sc.Title // the file's first line is the explored scenario's
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	err = htmlview.Write(f, htmlview.Run{Header: res.Header, Steps: res.Steps, Explored: &x})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// indexGroup is one row of the report page.
type indexGroup struct {
	N         int
	Bad       bool
	Count     int
	Width     float64 // the bar's share of the largest group, in percent
	Label     string
	Shortest  string
	File      string
	Page      string
	Divergent bool
	Diff      string
}

func writeIndex(rec explore.Record, groups []explore.RecordGroup, files, pages map[int]string, name string) error {
	largest := 1
	for _, g := range groups {
		largest = max(largest, len(g.Outcomes))
	}
	var rows []indexGroup
	for i, g := range groups {
		rows = append(rows, indexGroup{N: i + 1, Bad: g.Divergence || g.Broken, Count: len(g.Outcomes),
			Width: 100 * float64(len(g.Outcomes)) / float64(largest), Label: g.Label, Shortest: g.Outcomes[0].Placement,
			File: filepath.Base(files[i]), Page: filepath.Base(pages[i]), Divergent: g.Divergence, Diff: g.Outcomes[0].Diff})
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	err = indexPage.Execute(f, struct {
		R    explore.Record
		Rows []indexGroup
		Ran  int
	}{rec, rows, len(rec.Outcomes)})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

var indexPage = template.Must(template.New("index").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>cachelab explore {{.R.Scenario}}</title>
<style>
body { font: 14px system-ui, sans-serif; margin: 16px 24px; color: #1f2328; }
h1 { font-size: 18px; margin: 0 0 4px; }
.meta { color: #57606a; margin: 0 0 14px; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid #d0d7de; vertical-align: top; }
th { font-weight: 600; background: #f6f8fa; }
td.count { width: 180px; }
.bar { display: inline-block; height: 10px; background: #54aeff; border-radius: 2px; vertical-align: middle; margin-right: 6px; }
tr.bad .bar { background: #cf222e; }
tr.bad td.story { color: #cf222e; font-weight: 600; }
.shortest { color: #57606a; font-size: 12px; font-family: ui-monospace, monospace; }
.ok { color: #1a7f37; font-weight: 600; }
.links a { margin-right: 10px; }
pre.diff { font-size: 12px; background: #fff8f8; border: 1px solid #ffcecb; padding: 6px; white-space: pre-wrap; margin: 4px 0; }
</style></head><body>
<h1>cachelab explore · {{.R.Scenario}}</h1>
<p class="meta">faults {{range $i, $f := .R.Faults}}{{if $i}}, {{end}}{{$f}}{{end}} · up to {{.R.MaxFaults}} per run{{if .R.BetweenSteps}} · between steps only{{end}} · server {{.R.Server}}{{if .R.Stack}} · stack {{.R.Stack}}{{end}} · seed {{.R.Seed}}<br>
{{if .R.Plant}}<strong id="plant">planted bug in cachelab's side of every run: {{.R.Plant}} (--plant)</strong><br>{{end}}
{{.R.Placements}} placements: {{.R.Refused}} cannot stand where they are put, {{.R.Inert}} cannot change anything (not run), {{.Ran}} run{{if .R.Sampled}} (a sample, seed {{.R.SampleSeed}}, of the {{.R.Runnable}} that could){{end}}; each compared with client-go at every step</p>
{{$bad := false}}{{range .Rows}}{{if .Bad}}{{$bad = true}}{{end}}{{end}}
{{if not $bad}}<p class="ok" id="verdict">✓ every placement agreed with client-go and kept the invariants</p>{{else}}<p class="bad" id="verdict" style="color:#cf222e;font-weight:600">✗ a placement diverged from client-go or broke an invariant: its group comes first</p>{{end}}
<table id="groups">
<tr><th>placements</th><th>story</th><th>its shortest placement, as a scenario</th></tr>
{{range .Rows}}<tr class="group{{if .Bad}} bad{{end}}" id="group-{{.N}}">
<td class="count"><span class="bar" style="width:{{printf "%.0f" .Width}}px"></span>{{.Count}}</td>
<td class="story">{{if .Bad}}✗ {{end}}{{.Label}}</td>
<td><div class="shortest">{{.Shortest}}</div>{{if .Diff}}<pre class="diff">{{.Diff}}</pre>{{end}}<div class="links"><a class="timeline" href="{{.Page}}">timeline</a><a class="file" href="{{.File}}">scenario file</a></div></td>
</tr>
{{end}}</table>
<script>/* nothing on this page waits for script; browser tests wait for this */ window.cachelabView = {ready: true, errors: []};</script>
</body></html>
`))
