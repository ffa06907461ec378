package scenario

import (
	"fmt"
	"strconv"
	"strings"
)

// ExploreHint is a scenario's "# Explore:" line: one placement of a fault
// worth exploring, and the story explore tells of it, in its words:
//
//	# Explore: disconnect at=5 heal=6: a delete arrives as an event, where the run without the fault gets a tombstone
//
// at and heal are the gaps (before step at; one past the last step is
// the end), after-events and after-pages put a cut inside step at. The catalog shows
// the hints ('cachelab scenarios NAME'), and TestExploreHints runs each
// placement and checks that it tells the story the line says.
type ExploreHint struct {
	Fault PlacedFault
	Story string
}

// Placement is the hint's placement.
func (h ExploreHint) Placement() Placement { return Placement{Faults: []PlacedFault{h.Fault}} }

// parseHints reads the "# Explore:" lines of a scenario's opening comment
// (about), once its steps are known (n of them); line is the comment
// line of an error, 0-based.
func parseHints(about []string, n int) (hints []ExploreHint, line int, err error) {
	for i, l := range about {
		rest, ok := strings.CutPrefix(l, "Explore:")
		if !ok {
			continue
		}
		h, err := parseHint(rest, n)
		if err != nil {
			return nil, i, err
		}
		hints = append(hints, h)
	}
	return hints, 0, nil
}

const hintForm = "# Explore: <fault> at=<gap> [heal=<gap>] [after-events=<n> | after-pages=<n>]: <the story explore tells>"

func parseHint(text string, n int) (ExploreHint, error) {
	where, story, ok := strings.Cut(text, ":")
	story = strings.TrimSpace(story)
	if !ok || story == "" {
		return ExploreHint{}, fmt.Errorf("an explore hint is %s; this one has no story after the placement", hintForm)
	}
	fields := strings.Fields(where)
	if len(fields) == 0 {
		return ExploreHint{}, fmt.Errorf("an explore hint is %s; this one names no fault", hintForm)
	}
	k, ok := LookupFault(fields[0])
	if !ok {
		return ExploreHint{}, fmt.Errorf("the explore hint's fault %q is not one explore places (%s)", fields[0], strings.Join(faultNames(nil), ", "))
	}
	f := PlacedFault{Kind: k.Name}
	for _, kv := range fields[1:] {
		key, v, _ := strings.Cut(kv, "=")
		num, err := strconv.Atoi(v)
		if err != nil || num < 1 {
			return ExploreHint{}, fmt.Errorf("the explore hint's %s: want a positive number, as in %s", kv, hintForm)
		}
		switch key {
		case "at":
			f.At = num
		case "heal":
			f.Heal = num
		case "after-events":
			f.After = num
		case "after-pages":
			f.Page = num
		default:
			return ExploreHint{}, fmt.Errorf("the explore hint says %q; it takes at=, heal=, after-events= and after-pages=, as in %s", kv, hintForm)
		}
	}
	switch {
	case f.At < 1 || f.At > n+1:
		return ExploreHint{}, fmt.Errorf("the explore hint's at=%d: want a gap from 1 (before step 1) to %d (after the last step)", f.At, n+1)
	case k.Heal != "" && (f.Heal <= f.At || f.Heal > n+1):
		return ExploreHint{}, fmt.Errorf("%s needs healing (%s): want heal= a gap after at=%d, up to %d (the end)", k.Name, k.Heal, f.At, n+1)
	case k.Heal == "" && f.Heal != 0:
		return ExploreHint{}, fmt.Errorf("%s needs no healing: drop heal=", k.Name)
	case f.After > 0 && (!k.Inside || f.At > n):
		return ExploreHint{}, fmt.Errorf("after-events= puts a cut inside step at=: only %s, and only before a step", strings.Join(faultNames(func(k FaultKind) bool { return k.Inside }), " or "))
	case f.Page > 0 && (!k.Pages || f.At > n):
		return ExploreHint{}, fmt.Errorf("after-pages= puts a cut between a LIST's pages inside step at=: only %s, and only before a step", strings.Join(faultNames(func(k FaultKind) bool { return k.Pages }), " or "))
	case f.After > 0 && f.Page > 0:
		return ExploreHint{}, fmt.Errorf("the explore hint says after-events= and after-pages=: one cut per placement, as in %s", hintForm)
	}
	return ExploreHint{Fault: f, Story: story}, nil
}

// faultNames are the names of the fault kinds keep keeps (nil: all):
// those that can fall inside a step (k.Inside), between a LIST's pages
// (k.Pages).
func faultNames(keep func(FaultKind) bool) []string {
	var out []string
	for _, k := range FaultKinds {
		if keep == nil || keep(k) {
			out = append(out, k.Name)
		}
	}
	return out
}
