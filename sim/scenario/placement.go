package scenario

// Placing faults in a scenario: the levers a scenario pulls, put at points
// its author did not choose. A Placement is the scenario as data with
// fault commands put between its steps, or armed inside one (Text); each
// placed scenario is an ordinary scenario, parsed and run like any other.
// The explorer (package explore) enumerates placements, runs each, and
// tells their stories; a scenario's "# Explore:" hints (hints.go) name
// placements too.

import (
	"fmt"
	"slices"
	"strings"
)

// FaultKind is a fault explore can place: the command that pulls it, the
// command that heals it ("" for none: it is over once pulled), the world
// it needs ("" for either), whether it can also fall inside a step
// between two watch events (after-events=N, a cut), and whether between
// two pages of a LIST (after-pages=N).
type FaultKind struct {
	Name   string
	Heal   string
	About  string
	Inside bool
	Pages  bool
}

// FaultKinds are the faults explore knows, in the order it tries them.
var FaultKinds = []FaultKind{
	{Name: "disconnect", Heal: "reconnect", Inside: true, Pages: true, About: "the informers' connections drop until reconnect: watches end, requests wait"},
	{Name: "close-watch", Inside: true, About: "the server closes every watch, as at a watch's timeout"},
	{Name: "compact", About: "etcd compacts its history: older resourceVersions answer 410"},
	{Name: "hold-cache", Heal: "release-cache", About: "kube-apiserver's watch cache falls behind etcd until released"},
	{Name: "restart-apiserver", About: "a new kube-apiserver, its watch cache empty until it has listed etcd"},
	{Name: "restart-etcd", About: "etcd restarts: every watch on it ends"},
}

// DefaultFaults is what explore places when not told.
var DefaultFaults = []string{"disconnect", "close-watch", "compact"}

// World is the world the fault needs ("" if both have it): its lever's
// answer (package sim/lever).
func (k FaultKind) World() string { return NeedsServer(k.Name) }

// LookupFault is the fault kind of that name.
func LookupFault(name string) (FaultKind, bool) {
	for _, k := range FaultKinds {
		if k.Name == name {
			return k, true
		}
	}
	return FaultKind{}, false
}

// PlacedFault is one fault put into a scenario: pulled before step At
// (1-based; one past the last step is after it) and, if it needs
// healing, healed before step Heal (At < Heal; one past the last is at
// the end).
//
// With After > 0 the fault falls inside step At instead, right after each
// informer has taken After watch events of it (disconnect and close-watch
// with after-events=After, armed just before the step). With Page > 0 it
// falls inside step At right after each informer has taken Page pages
// of paged LISTs with more pages to come (disconnect with
// after-pages=Page).
// At most one of After and Page is set.
type PlacedFault struct {
	Kind  string `json:"kind"`
	At    int    `json:"at"`
	After int    `json:"after,omitempty"` // 0: not after a watch event
	Page  int    `json:"page,omitempty"`  // 0: not between a LIST's pages
	Heal  int    `json:"heal,omitempty"`  // 0: the fault needs no healing
}

// Placement is the faults put into one run.
type Placement struct {
	Faults []PlacedFault
}

// Describe says where the faults go, by the scenario's steps.
func (p Placement) Describe(sc *Scenario) string {
	var parts []string
	at := func(i int) string {
		if i > len(sc.Steps) {
			return "after the last step"
		}
		return fmt.Sprintf("before step %d (%s)", i, sc.Steps[i-1].Text)
	}
	for _, f := range p.Faults {
		s := f.Kind + " " + at(f.At)
		switch {
		case f.After > 0:
			s = fmt.Sprintf("%s inside step %d (%s), after %s", f.Kind, f.At, sc.Steps[f.At-1].Text, EventsTaken(f.After))
		case f.Page > 0:
			s = fmt.Sprintf("%s inside step %d (%s), after %s", f.Kind, f.At, sc.Steps[f.At-1].Text, PagesTaken(f.Page))
		}
		if k, _ := LookupFault(f.Kind); k.Heal != "" {
			if f.Heal > len(sc.Steps) {
				s += ", " + k.Heal + " at the end"
			} else {
				s += ", " + k.Heal + " " + at(f.Heal)
			}
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// Commands is the placed scenario's command lines, in order.
func (p Placement) Commands(sc *Scenario) []string {
	var out []string
	for _, c := range p.Placed(sc) {
		out = append(out, c.Text)
	}
	return out
}

// PlacedCmd is a command of a placed scenario: one of the scenario's
// steps (Step, 1-based), or a fault or its heal (Step 0).
type PlacedCmd struct {
	Text string
	Step int
}

// Placed is the placed scenario's commands, in order, each with the step
// of the scenario it is (0 for a fault or a heal).
func (p Placement) Placed(sc *Scenario) []PlacedCmd {
	n := len(sc.Steps)
	var out []PlacedCmd
	for i := 1; i <= n+1; i++ {
		for _, f := range p.Faults {
			k, _ := LookupFault(f.Kind)
			if k.Heal != "" && f.Heal == i {
				out = append(out, PlacedCmd{Text: k.Heal})
			}
		}
		for _, f := range p.Faults {
			switch {
			case f.At == i && f.After > 0:
				out = append(out, PlacedCmd{Text: fmt.Sprintf("%s after-events=%d", f.Kind, f.After)})
			case f.At == i && f.Page > 0:
				out = append(out, PlacedCmd{Text: fmt.Sprintf("%s after-pages=%d", f.Kind, f.Page)})
			case f.At == i:
				out = append(out, PlacedCmd{Text: f.Kind})
			}
		}
		if i <= n {
			out = append(out, PlacedCmd{Text: sc.Steps[i-1].Text, Step: i})
		}
	}
	return out
}

// Text is the placed scenario as a file: an opening paragraph saying where
// it came from, and its first upTo commands (all if upTo is 0 or more
// than there are), each with the output given (outputs[i] for the i-th;
// none past the end of outputs).
func (p Placement) Text(sc *Scenario, server, about string, upTo int, outputs []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s.\n", strings.TrimSuffix(sc.Title, "."))
	// The placement names the scenario's steps; this file's own number
	// its faults too.
	fmt.Fprintf(&b, "# Explored: %s; steps numbered as in %s.\n", p.Describe(sc), sc.Name)
	for _, l := range strings.Split(about, "\n") {
		if l != "" {
			fmt.Fprintf(&b, "# %s\n", l)
		}
	}
	fmt.Fprintf(&b, "# Server: %s\n", server)
	if sc.Detector {
		fmt.Fprintf(&b, "# Env: %s=true\n", EnvDetector)
	}
	cmds := p.Placed(sc)
	if upTo > 0 && upTo < len(cmds) {
		cmds = cmds[:upTo]
	}
	for i, c := range cmds {
		input := "" // a crd step's manifest, between it and its "----"
		if c.Step > 0 {
			input = sc.Steps[c.Step-1].Input
		}
		fmt.Fprintf(&b, "\n%s\n%s----\n", c.Text, input)
		if i < len(outputs) {
			b.WriteString(outputs[i])
		}
	}
	return b.String()
}

// WithoutExpectations is sc with no expected output: a scenario's own
// expected lines are for its own run, and explore compares runs with
// client-go and the baseline, not with the file.
func (sc *Scenario) WithoutExpectations() *Scenario {
	c := *sc
	c.Steps = slices.Clone(sc.Steps)
	for i := range c.Steps {
		c.Steps[i].Expected = ""
	}
	return &c
}

// EventsTaken says how far into a step a cut (after-events=n) falls:
// "its first watch event", "its first 3 watch events". Describe says it
// so, and so does the runner's trace line when it arms the cut.
func EventsTaken(n int) string {
	if n == 1 {
		return "its first watch event"
	}
	return fmt.Sprintf("its first %d watch events", n)
}

// PagesTaken says how far into a step's paged LISTs a cut falls.
func PagesTaken(n int) string {
	if n == 1 {
		return "its first LIST page with more to come"
	}
	return fmt.Sprintf("%d LIST pages with more to come", n)
}
