package exercise

import (
	"context"
	_ "embed"
	"fmt"
	"slices"
	"sync"

	"github.com/cachelab/cachelab/notebooks/internal/lab"
	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/sim/explore"
	"github.com/cachelab/cachelab/sim/scenario"
)

// scenarioFile is the lab's scenario: two pods, the informer started, a
// second, the delete, a create and a compaction.
//
//go:embed lost-delete.txt
var scenarioFile []byte

// Prediction is a LosesDelete: yours, the reference's, or a planted
// mistake's.
type Prediction func(disconnectBefore, reconnectBefore int) bool

// Checks hold prediction against the explorer, one share of the
// placements each: those that disconnect before the informer has
// listed; those that disconnect after, and reconnect before the
// compaction; and those that disconnect after, and reconnect after it.
// Each placement's truth is its story (lostIn): a tombstone, or ns0/b
// never seen, is a lost delete. A check reports the first placement,
// in the explorer's order, where prediction says otherwise, and what the
// handler heard of ns0/b there.
func Checks(prediction Prediction) []lab.Check {
	return []lab.Check{
		{ID: "F1 P3", Behaviour: "disconnected before the informer has listed", Run: func() error {
			return compare(prediction, func(s steps, f scenario.PlacedFault) bool { return f.At <= s.start })
		}},
		{ID: "F4 P2 P3", Behaviour: "after it has listed; reconnected before compact", Run: func() error {
			return compare(prediction, func(s steps, f scenario.PlacedFault) bool { return f.At > s.start && f.Heal <= s.compact })
		}},
		{ID: "E7 F4 P3", Behaviour: "after it has listed; reconnected after compact", Run: func() error {
			return compare(prediction, func(s steps, f scenario.PlacedFault) bool { return f.At > s.start && f.Heal > s.compact })
		}},
	}
}

// steps are where the scenario's start and compact are (1-based).
type steps struct{ start, compact int }

// exploration is the explorer's record of the scenario, made once and
// shared by every check of every run of the checks.
type exploration struct {
	sc    *scenario.Scenario
	rec   explore.Record
	steps steps
	err   error
}

var explored = sync.OnceValue(func() exploration {
	sc, err := scenario.Parse("lost-delete.txt", scenarioFile)
	if err != nil {
		return exploration{err: err}
	}
	x := exploration{sc: sc}
	for i, st := range sc.Steps {
		switch st.Cmd {
		case "start":
			x.steps.start = i + 1
		case "compact":
			x.steps.compact = i + 1
		}
	}
	// Every placement of one disconnect: a few dozen runs, most of
	// them waiting, so many at once.
	ex, err := explore.Run(context.Background(), sc, explore.Options{Faults: []string{"disconnect"}, MaxFaults: 1, BetweenSteps: true,
		Jobs: 40, Run: sim.Options{Seed: 1}})
	if err != nil {
		x.err = fmt.Errorf("the explorer could not explore lost-delete.txt: %w", err)
		return x
	}
	x.rec = ex.Record()
	return x
})

// compare holds prediction against every placement of one disconnect
// (between two steps: the lab asks only about gaps) for which in says
// yes.
func compare(prediction Prediction, in func(steps, scenario.PlacedFault) bool) error {
	x := explored()
	if x.err != nil {
		return x.err
	}
	checked := 0
	for _, o := range x.rec.Outcomes { // in placement order
		f := o.Faults[0]
		if !in(x.steps, f) {
			continue
		}
		checked++
		lost, err := lostIn(o)
		if err != nil {
			return err
		}
		if said := prediction(f.At, f.Heal); said != lost {
			return differs(x.sc, o, said, lab.Func(prediction))
		}
	}
	if checked == 0 {
		return fmt.Errorf("the explorer made no placement of this share: has lost-delete.txt changed?")
	}
	return nil
}

// The explorer's stories (explore.Stories, by their keys) that lose a
// delete the run without the fault delivers, and those that do not.
var (
	losing = []string{
		"tombstone",              // a delete arrives as a tombstone
		"never-seen",             // an object is never seen
		"delete-never-delivered", // a delete is never delivered
	}
	keeping = []string{
		"nothing", "relisted", "watched-again", // nothing visible (to the handlers)
		"calls-later", "calls-earlier", "calls-moved", // the same calls, at other steps
		"unchanged-again",     // an unchanged object is delivered again as an update
		"unchanged-not-again", // a relist's (or a resync's) unchanged update does not come
	}
)

// lostIn says whether a placement's story loses the delete. A story the
// lab does not know, a divergence from client-go and a broken invariant
// are errors: the first two mean the explorer changed, the others a bug
// in cachelab, not in a prediction.
func lostIn(o explore.OutcomeRecord) (bool, error) {
	if o.Divergence || o.Broken {
		return false, fmt.Errorf("%s: the explorer found %q, a bug in cachelab rather than in your prediction; its file:\n%s",
			o.Placement, o.Group, o.Minimal)
	}
	lost, known := false, true
	for _, key := range o.Stories {
		switch {
		case slices.Contains(losing, key):
			lost = true
		case !slices.Contains(keeping, key):
			known = false
		}
	}
	if !known {
		return false, fmt.Errorf("%s: the explorer found %q, a story this lab does not know", o.Placement, o.Group)
	}
	return lost, nil
}
