package exercise

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/sim/explore"
	"github.com/cachelab/cachelab/sim/scenario"
	"github.com/cachelab/cachelab/sim/trace"
)

// differs is the report of a placement where the prediction (said, by
// the function where) and the explorer part ways: the placement, both
// answers, the explorer's story, and what the handler heard of ns0/b in
// that placement's run (heard).
func differs(sc *scenario.Scenario, o explore.OutcomeRecord, said bool, where string) error {
	answer := map[bool]string{true: "loses the delete", false: "keeps the delete"}
	calls, err := heard(sc, o.Faults[0])
	if err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s:\nyou said it %s (%s); the explorer found it %s: %q.\n", o.Placement, answer[said], where, answer[!said], o.Group)
	if len(calls) == 0 {
		b.WriteString("The handler never heard of ns0/b: no OnAdd, no OnDelete.")
	} else {
		fmt.Fprintf(&b, "What the handler heard of ns0/b:\n  %s", strings.Join(calls, "\n  "))
	}
	if lost, delivered := !said, deliveredIn(calls); lost == delivered {
		b.WriteString("\nThe explorer's story and the run disagree on whether the delete came: a bug in the explorer; please report it.")
	}
	return fmt.Errorf("%s", b.String())
}

// deliveredIn says whether calls hold the delete as an event: OnDelete
// with the object, not a tombstone.
func deliveredIn(calls []string) bool {
	for _, c := range calls {
		if strings.HasPrefix(c, "OnDelete ns0/b@") {
			return true
		}
	}
	return false
}

// replays are the handler's calls on ns0/b in each placement's run, by
// placement, so that the checks of many predictions run each at most
// once.
var replays sync.Map // scenario.PlacedFault -> []string

// heard runs the scenario with f placed, and returns the handler's
// calls that name ns0/b, each with where in the placed scenario it came.
func heard(sc *scenario.Scenario, f scenario.PlacedFault) ([]string, error) {
	if calls, ok := replays.Load(f); ok {
		return calls.([]string), nil
	}
	p := scenario.Placement{Faults: []scenario.PlacedFault{f}}
	placed, err := scenario.Parse("lost-delete.placed.txt", []byte(p.Text(sc, scenario.ServerEtcd, "", 0, nil)))
	if err != nil {
		return nil, err
	}
	res, err := sim.Run(context.Background(), placed, sim.Options{Seed: 1})
	if err != nil {
		return nil, err
	}
	where := commandNames(sc, f)
	var calls []string
	for i, sr := range res.Steps {
		for _, l := range strings.Split(trace.StepOutput(sr), "\n") {
			if strings.HasPrefix(l, "handler/") && strings.Contains(l, "ns0/b") {
				calls = append(calls, strings.Join(strings.Fields(l)[1:], " ")+", at "+where[i])
			}
		}
	}
	replays.Store(f, calls)
	return calls, nil
}

// commandNames names each command of the scenario with f placed, in
// order, by the scenario's steps: "step 3 (start)", "the reconnect
// before step 6", "the reconnect at the end".
func commandNames(sc *scenario.Scenario, f scenario.PlacedFault) []string {
	n := len(sc.Steps)
	before := func(i int) string {
		if i > n {
			return "at the end"
		}
		return fmt.Sprintf("before step %d", i)
	}
	var out []string
	for i := 1; i <= n+1; i++ {
		if i == f.Heal {
			out = append(out, "the reconnect "+before(i))
		}
		if i == f.At {
			out = append(out, "the disconnect "+before(i))
		}
		if i <= n {
			out = append(out, fmt.Sprintf("step %d (%s)", i, sc.Steps[i-1].Text))
		}
	}
	return out
}
