package htmlview

import (
	"strconv"
	"strings"

	"github.com/cachelab/cachelab/sim/trace"
)

// A page of one of cachelab explore's groups (--out DIR) draws the run of
// the group's file: the explored scenario with faults put in. It says so
// at the top, before anything else: the group's story (its title: the
// scenario's own title is a claim about the run without faults, which
// this run may not bear out), the scenario explored and where the faults
// went, by the scenario's step numbers. Its columns are numbered the same
// way, a fault explore put in marked "+", and under each handler's (and
// each reconcile's) lanes, a lane "without faults" shows what the
// scenario's own run handed on at the same step: the run the group's
// story is told against, to compare without leaving the page.

// WithoutFaults is the implementation name of the lanes of an explored
// group's page that show the scenario's run without faults.
const WithoutFaults = "without faults"

// Explored is what an explored group's page says about its run.
type Explored struct {
	// Scenario is the scenario explored, Title its own title.
	Scenario, Title string
	// Group is the group's story ("group 1: an object is never seen ...").
	Group string
	// Placement is where the faults went, by the scenario's steps.
	Placement string
	// Steps is, for each step of the run, the scenario's step it is
	// (1-based), or 0 for a fault or heal explore put in.
	Steps []int
	// Baseline is the scenario's run without faults, at least through
	// the steps the run has (nil if it could not be had).
	Baseline []trace.StepResult
}

// viewExplored is what view.js shows of an Explored.
type viewExplored struct {
	Scenario  string `json:"scenario"`
	Title     string `json:"title"`
	Group     string `json:"group"`
	Placement string `json:"placement"`
	Baseline  bool   `json:"baseline"`
}

// compared reports whether a baseline event is drawn: the handler calls
// and the reconciles, what a group's story compares.
func compared(e trace.Event) bool {
	return strings.HasPrefix(e.Layer, trace.LayerHandler+"/") || e.Layer == trace.LayerReconcile
}

// explored numbers the steps as the explored scenario does and puts the
// baseline's calls and reconciles in the columns of the same steps.
func (b *builder) explored(r Run) {
	x := r.Explored
	if x == nil {
		return
	}
	b.v.Explored = &viewExplored{Scenario: x.Scenario, Title: x.Title, Group: x.Group, Placement: x.Placement, Baseline: x.Baseline != nil}
	at := map[int]int{} // the scenario's step -> the run's step number
	for i := range b.v.Steps {
		if i >= len(x.Steps) {
			break
		}
		switch n := x.Steps[i]; {
		case n > 0:
			b.v.Steps[i].Label = strconv.Itoa(n)
			at[n] = b.v.Steps[i].N
		default:
			b.v.Steps[i].Label = "+"
		}
	}
	for _, sr := range x.Baseline {
		step, ok := at[sr.Index]
		if !ok {
			continue // past the run's last step
		}
		var events []trace.Event
		for _, e := range sr.Sides[trace.Cachelab] {
			if compared(e) {
				events = append(events, e)
			}
		}
		b.add(step, WithoutFaults, events, make([]trace.Telling, len(events)), nil) // not in the step's order: no story tells it
	}
}

// exploredTitle is an explored group's page's title: the group's story,
// not the scenario's claim.
func exploredTitle(x *Explored) string {
	return "cachelab explore · " + x.Scenario + " · " + x.Group
}
