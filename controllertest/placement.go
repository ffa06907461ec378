package controllertest

import (
	"fmt"

	"github.com/cachelab/cachelab/sim/scenario"
)

// A Placement is where one fault goes in a story: pulled at gap At and,
// if it heals, healed at gap Heal. Gap i is before step i; gap n+1 is
// after the last step. The zero Placement has no fault: the baseline.
type Placement struct {
	Fault    string
	At, Heal int
}

// none is the baseline's placement.
func (p Placement) none() bool { return p.Fault == "" }

// placed is a command of a placed story: a story step (1-based), or a
// command of the fault's (step 0).
type placed struct {
	text string
	step int
}

// commands are the story's commands with p's fault in them, in order: at
// a gap, a heal's commands come before a fault's.
func (p Placement) commands(sc *scenario.Scenario) []placed {
	k, _ := faultKind(p.Fault)
	var out []placed
	for i := 1; i <= len(sc.Steps)+1; i++ {
		if !p.none() && k.Heal != "" && p.Heal == i {
			for _, c := range k.healing {
				out = append(out, placed{text: c})
			}
		}
		if !p.none() && p.At == i {
			for _, c := range k.pulling {
				out = append(out, placed{text: c})
			}
		}
		if i <= len(sc.Steps) {
			out = append(out, placed{text: sc.Steps[i-1].Text, step: i})
		}
	}
	return out
}

// describe says where p's fault goes, by the story's steps.
func (p Placement) describe(sc *scenario.Scenario) string {
	if p.none() {
		return "no faults"
	}
	at := func(i int) string {
		if i > len(sc.Steps) {
			return "after the last step"
		}
		return fmt.Sprintf("before step %d (%s)", i, sc.Steps[i-1].Text)
	}
	s := p.Fault + " " + at(p.At)
	if k, _ := faultKind(p.Fault); k.Heal != "" {
		if p.Heal > len(sc.Steps) {
			s += ", " + k.Heal + " at the end"
		} else {
			s += ", " + k.Heal + " " + at(p.Heal)
		}
	}
	return s
}
