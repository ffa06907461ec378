package controllertest

import (
	"fmt"
	"slices"
	"strings"
)

// A Report is what an exploration found: the baseline run, and the
// placements grouped by verdict, those that broke an invariant (or
// could not be played) first.
type Report struct {
	Story    string
	Baseline Outcome
	Groups   []Group
}

// A Group is the placements with one verdict: the invariants they broke
// (none: they kept every one), or the error they ended with. Outcomes
// are in placement order, the first the smallest: its File replays it.
type Group struct {
	Verdict  string
	Outcomes []Outcome
}

// Failed reports whether the baseline or any placement broke an
// invariant or could not be played.
func (r *Report) Failed() bool {
	if r.Baseline.verdict() != passed {
		return true
	}
	return slices.ContainsFunc(r.Groups, func(g Group) bool { return g.Verdict != passed })
}

const passed = "kept every invariant"

// Placements is how many placements were run.
func (r *Report) Placements() int {
	n := 0
	for _, g := range r.Groups {
		n += len(g.Outcomes)
	}
	return n
}

// group puts outcomes (in placement order) in groups: the broken first,
// in the order of their first placement, then those that kept every
// invariant.
func (r *Report) group(outs []Outcome) {
	at := map[string]int{}
	for _, o := range outs {
		v := o.verdict()
		i, ok := at[v]
		if !ok {
			i = len(r.Groups)
			at[v] = i
			r.Groups = append(r.Groups, Group{Verdict: v})
		}
		r.Groups[i].Outcomes = append(r.Groups[i].Outcomes, o)
	}
	slices.SortStableFunc(r.Groups, func(a, b Group) int {
		return boolInt(a.Verdict == passed) - boolInt(b.Verdict == passed)
	})
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// String is the report as a person reads it: the baseline, then each
// group with its placements, and for a broken one what broke, its
// smallest placement's trace and file.
func (r *Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "explored %s: the baseline and %d placements\n", r.Story, r.Placements())
	fmt.Fprintf(&b, "\nbaseline (no faults): %s\n", r.Baseline.verdict())
	if r.Baseline.verdict() != passed {
		writeOutcome(&b, r.Baseline)
	}
	for _, g := range r.Groups {
		fmt.Fprintf(&b, "\n%d placements %s:\n", len(g.Outcomes), g.Verdict)
		for _, o := range g.Outcomes {
			fmt.Fprintf(&b, "  - %s\n", o.Where)
		}
		if g.Verdict != passed {
			fmt.Fprintf(&b, "\n  the first, %s:\n", g.Outcomes[0].Where)
			writeOutcome(&b, g.Outcomes[0])
		}
	}
	return b.String()
}

// String is the outcome as a report shows a group's first: its verdict,
// what broke, what happened, and the story to replay it.
func (o Outcome) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", o.Where, o.verdict())
	writeOutcome(&b, o)
	return b.String()
}

// Kept reports whether the run was played to its end and kept every
// invariant.
func (o Outcome) Kept() bool { return o.verdict() == passed }

func writeOutcome(b *strings.Builder, o Outcome) {
	for _, br := range o.Broken {
		fmt.Fprintf(b, "  %s: %s\n", br.Invariant, br.Why)
	}
	if o.Err != nil {
		fmt.Fprintf(b, "  error: %v\n", o.Err)
	}
	b.WriteString("\n  what happened:\n")
	for _, l := range o.Trace {
		fmt.Fprintf(b, "    %s\n", l)
	}
	b.WriteString("\n  the story with its faults, to replay:\n")
	for _, l := range strings.Split(strings.TrimRight(o.File, "\n"), "\n") {
		fmt.Fprintf(b, "    %s\n", l)
	}
}
