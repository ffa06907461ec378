package explore

import (
	_ "embed"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/cachelab/cachelab/sim/scenario"
)

// An exploration as data: what each placement told, in a form that a
// shard writes (cachelab explore --shard i/n --output json) and that
// merges with the other shards' into the record an unsharded exploration
// makes (Merge). Reports are printed from records only, so a merged
// exploration prints the same bytes as an unsharded one.

// Schema is the JSON Schema (draft 2020-12) a Record
// validates against: what each field means, for a reader of
// explore --output json.
//
//go:embed schema.json
var Schema []byte

// SchemaVersion is the version of the record's form, its "schema"
// field.
const SchemaVersion = 1

// Record is an exploration, or one shard of it.
type Record struct {
	Schema    int      `json:"schema"`
	Scenario  string   `json:"scenario"`
	Server    string   `json:"server"`
	Stack     string   `json:"stack,omitempty"`
	Seed      uint64   `json:"seed"` // each run's
	Faults    []string `json:"faults"`
	MaxFaults int      `json:"maxFaults"`
	// BetweenSteps says the faults went only between steps, none inside
	// one (Options.BetweenSteps).
	BetweenSteps bool `json:"betweenSteps,omitempty"`
	// Plant names the known bug planted in cachelab's side of every run
	// (sim.Options.Plant), if any.
	Plant string `json:"plant,omitempty"`
	// Placements, Refused and Inert count the whole exploration's
	// placements, whichever shard this is; Runnable is how many could run
	// (neither refused nor inert), whether or not a sample chose fewer
	// (Sampled); Outcomes holds this shard's share of those that ran.
	Placements int    `json:"placements"`
	Refused    int    `json:"refused"`
	Inert      int    `json:"inert"`
	Runnable   int    `json:"runnable"`
	Sampled    int    `json:"sampled,omitempty"` // how many of the runnable a sample chose; 0 for all
	SampleSeed uint64 `json:"sampleSeed,omitempty"`
	// Shard is "i/n" for one shard's record, "" for a whole exploration.
	Shard    string          `json:"shard,omitempty"`
	Outcomes []OutcomeRecord `json:"outcomes"`
}

// OutcomeRecord is one placement's outcome.
type OutcomeRecord struct {
	Index     int                    `json:"index"` // its place among the runnable placements
	Faults    []scenario.PlacedFault `json:"faults"`
	Placement string                 `json:"placement"` // in words, by the scenario's steps
	Group     string                 `json:"group"`
	// Stories are the keys of the stories Group tells (Stories,
	// StoryKeys): the same whatever words the report uses.
	Stories    []string `json:"stories,omitempty"`
	Divergence bool     `json:"divergence,omitempty"`
	Broken     bool     `json:"broken,omitempty"`
	// Minimal is the placement as a scenario file that tells its story
	// (Exploration.Minimal).
	Minimal string `json:"minimal"`
	// Diff is, for a divergence, where and how client-go differed (the
	// step, and -cachelab +client-go); for a run that failed, its error.
	Diff string `json:"diff,omitempty"`
}

// RecordGroup is the outcomes of one story, in a record.
type RecordGroup struct {
	Label              string
	Divergence, Broken bool
	Outcomes           []OutcomeRecord // Outcomes[0] is the shortest
}

// Record is the exploration as data.
func (ex *Exploration) Record() Record {
	rec := Record{Schema: SchemaVersion, Scenario: ex.Scenario.Name, Server: ex.Server, Stack: string(ex.stack), Seed: ex.seed, Faults: ex.Faults, MaxFaults: ex.maxFaults, BetweenSteps: ex.betweenSteps, Plant: ex.plant,
		Placements: ex.Placements, Refused: ex.Refused, Inert: ex.Inert, Runnable: ex.runnable, Sampled: ex.sampled, SampleSeed: ex.sampleSeed,
		Shard: ex.shard, Outcomes: []OutcomeRecord{}}
	for _, g := range ex.Groups {
		for _, o := range g.Outcomes {
			rec.Outcomes = append(rec.Outcomes, OutcomeRecord{Index: o.index, Faults: o.Placement.Faults, Placement: o.Placement.Describe(ex.Scenario),
				Group: o.Group, Stories: StoryKeys(o.Group), Divergence: o.Divergence, Broken: o.Broken, Minimal: ex.Minimal(o), Diff: ex.diff(o)})
		}
	}
	slices.SortFunc(rec.Outcomes, func(a, b OutcomeRecord) int { return a.Index - b.Index })
	return rec
}

// Merge merges the records of every shard of one exploration into
// the record the exploration unsharded makes. It refuses records of
// different explorations, a shard given twice and a missing one.
func Merge(recs []Record) (Record, error) {
	if len(recs) == 0 {
		return Record{}, fmt.Errorf("no records to merge")
	}
	first := recs[0]
	var n int
	seen := map[int]bool{}
	out := first
	out.Shard, out.Outcomes = "", []OutcomeRecord{}
	for _, r := range recs {
		var i, k int
		if _, err := fmt.Sscanf(r.Shard, "%d/%d", &i, &k); err != nil || k < 1 || i < 0 || i >= k {
			return Record{}, fmt.Errorf("a record of %s is not a shard's (its shard is %q, want i/n): merge the records that explore --shard writes", r.Scenario, r.Shard)
		}
		switch {
		case r.Schema != SchemaVersion:
			return Record{}, fmt.Errorf("shard %s is a record of schema %d; this cachelab reads schema %d: explore it again with this cachelab", r.Shard, r.Schema, SchemaVersion)
		case r.Scenario != first.Scenario || r.Server != first.Server || r.Stack != first.Stack || !slices.Equal(r.Faults, first.Faults) ||
			r.MaxFaults != first.MaxFaults || r.BetweenSteps != first.BetweenSteps || r.Plant != first.Plant || r.Placements != first.Placements || r.Runnable != first.Runnable || r.Sampled != first.Sampled ||
			r.SampleSeed != first.SampleSeed || r.Seed != first.Seed:
			return Record{}, fmt.Errorf("shard %s is of another exploration than shard %s (scenario, server, stack, faults, planted bug, sample or placements differ)", r.Shard, first.Shard)
		case n != 0 && k != n:
			return Record{}, fmt.Errorf("shard %s is one of %d, shard %s one of %d", r.Shard, k, first.Shard, n)
		case seen[i]:
			return Record{}, fmt.Errorf("shard %s is given twice", r.Shard)
		}
		n, seen[i] = k, true
		out.Outcomes = append(out.Outcomes, r.Outcomes...)
	}
	for i := range n {
		if !seen[i] {
			return Record{}, fmt.Errorf("shard %d/%d is missing", i, n)
		}
	}
	slices.SortFunc(out.Outcomes, func(a, b OutcomeRecord) int { return a.Index - b.Index })
	return out, nil
}

// Groups is the record's outcomes grouped by story (groupBy).
func (rec Record) Groups() []RecordGroup {
	var out []RecordGroup
	for _, g := range groupBy(rec.Outcomes, func(o OutcomeRecord) (string, bool, bool) { return o.Group, o.Divergence, o.Broken },
		func(o OutcomeRecord) scenario.Placement { return scenario.Placement{Faults: o.Faults} }) {
		out = append(out, RecordGroup{Label: g.label, Divergence: g.divergence, Broken: g.broken, Outcomes: g.items})
	}
	return out
}

// grouped is one story's items.
type grouped[T any] struct {
	label              string
	divergence, broken bool
	items              []T
}

// groupBy groups items by story: divergences first, then broken
// invariants, then the rest, the largest group first, then by label;
// within a group, the shortest placement first (shorter).
func groupBy[T any](items []T, story func(T) (label string, divergence, broken bool), placement func(T) scenario.Placement) []grouped[T] {
	byLabel := map[string]*grouped[T]{}
	var groups []*grouped[T]
	for _, it := range items {
		label, div, broken := story(it)
		g := byLabel[label]
		if g == nil {
			g = &grouped[T]{label: label, divergence: div, broken: broken}
			byLabel[label] = g
			groups = append(groups, g)
		}
		g.items = append(g.items, it)
	}
	rank := func(g *grouped[T]) int {
		switch {
		case g.divergence:
			return 0
		case g.broken:
			return 1
		}
		return 2
	}
	sort.SliceStable(groups, func(i, j int) bool {
		a, b := groups[i], groups[j]
		if rank(a) != rank(b) {
			return rank(a) < rank(b)
		}
		if len(a.items) != len(b.items) {
			return len(a.items) > len(b.items)
		}
		return a.label < b.label
	})
	out := make([]grouped[T], len(groups))
	for i, g := range groups {
		slices.SortStableFunc(g.items, func(a, b T) int { return shorter(placement(a), placement(b)) })
		out[i] = *g
	}
	return out
}

// WriteReport writes the record as cachelab explore prints it: a header
// saying what was explored and how much of it ran, then each group (as
// Groups orders them) with its size, its story, its shortest placement,
// and, for a divergence or a broken invariant, how it differed and its
// file. files, if not nil, names each group's file (by the group's
// index), written beside the report (--out); a divergence's file is then
// named, not printed.
func (rec Record) WriteReport(w io.Writer, files map[int]string) {
	groups := rec.Groups()
	between := ""
	if rec.BetweenSteps {
		between = " · between steps only"
	}
	fmt.Fprintf(w, "# cachelab explore %s · faults %s · up to %d per run%s · server %s\n", rec.Scenario,
		strings.Join(rec.Faults, ", "), rec.MaxFaults, between, rec.Server)
	if rec.Plant != "" {
		fmt.Fprintf(w, "# planted bug in cachelab's side of every run: %s (--plant)\n", rec.Plant)
	}
	fmt.Fprintf(w, "# %d placements: %d cannot stand where they are put, %d cannot change anything (not run), %d run",
		rec.Placements, rec.Refused, rec.Inert, len(rec.Outcomes))
	if rec.Sampled > 0 {
		fmt.Fprintf(w, " (a sample, seed %d: %.0f%% of the %d that could)", rec.SampleSeed, 100*float64(rec.Sampled)/float64(rec.Runnable), rec.Runnable)
	}
	fmt.Fprintf(w, "; each compared with client-go at every step\n")
	// One numbering for every step the report names: the scenario's.
	fmt.Fprintf(w, "# steps are numbered as in %s (a group's file numbers its own, its faults among them)\n\n", rec.Scenario)
	for i, g := range groups {
		mark := " "
		if g.Divergence || g.Broken {
			mark = "✗"
		}
		fmt.Fprintf(w, "%s %4d  %s\n", mark, len(g.Outcomes), g.Label)
		fmt.Fprintf(w, "        shortest: %s\n", g.Outcomes[0].Placement)
		if name, ok := files[i]; ok {
			fmt.Fprintf(w, "        file: %s\n", name)
		}
		if d := g.Outcomes[0].Diff; d != "" {
			fmt.Fprintf(w, "        how: %s\n", strings.ReplaceAll(d, "\n", "\n          "))
		}
		if (g.Divergence || g.Broken) && files[i] == "" {
			fmt.Fprintf(w, "        file:\n")
			for _, l := range strings.Split(strings.TrimRight(g.Outcomes[0].Minimal, "\n"), "\n") {
				fmt.Fprintf(w, "          %s\n", l)
			}
		}
	}
	if len(groups) == 0 {
		fmt.Fprintln(w, "no placement ran")
	}
}
