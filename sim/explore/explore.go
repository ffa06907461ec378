// Package explore explores a scenario (cachelab explore): the scenario
// run once per placement of a fault, both implementations compared at
// every step of every run, and the outcomes grouped by what a person
// would call the same story.
//
// It is a client of the simulator's API and nothing more: a placement is
// the scenario as data with fault commands put in it
// (scenario.Placement), the placed scenario is parsed (scenario.Parse)
// and run (sim.Run) like any other, and its story is read from the run's
// steps (story.go). So what holds for a run holds for each placement:
// the same trace on every run, compared with client-go at every step, the
// invariants checked after each.
//
// The points are the gaps between steps, before the first and after the
// last; for a cut (disconnect, close-watch), points inside a step whose
// watch hands an informer two or more events; and for a disconnect,
// points between the pages of a paged LIST (innerPoints). A fault that
// needs healing (disconnect, hold-cache) is healed at each later gap, or
// at the end.
package explore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/sim/lever"
	"github.com/cachelab/cachelab/sim/scenario"
	"github.com/cachelab/cachelab/sim/trace"
)

// Options says what to explore and how.
type Options struct {
	// Faults are the fault kinds to place (scenario.DefaultFaults if empty).
	Faults []string
	// MaxFaults is how many faults a placement has at most: 1 or 2
	// (1 if 0).
	MaxFaults int
	// Jobs is how many placements run at once at most (1 if 0).
	Jobs int
	// Computing, if above 0, is how many of those may compute at once:
	// a run that waits real time (a relist backoff: sim.Options.OnRealWait)
	// does not count while it waits, so another starts meanwhile, up to
	// Jobs in all. Jobs if 0 (or above Jobs). AutoJobs chooses both.
	Computing int
	// Sample, if above 0, runs a seeded random choice of that many
	// placements (SampleSeed) instead of all.
	Sample     int
	SampleSeed uint64
	// Shard and Shards, if Shards is above 1, run only shard Shard
	// (0-based) of Shards: the runnable placements whose index is Shard
	// modulo Shards. Records of every shard merge into the unsharded
	// exploration's (Merge).
	Shard, Shards int
	// Run is each run's options (the world, the stack, the seed).
	Run sim.Options
	// BetweenSteps places the faults only in the gaps between steps,
	// not inside a step (no after-events or after-pages cuts).
	BetweenSteps bool
	// Only, if set, limits the exploration to these placements (each
	// compared with the run without faults as usual); the others are
	// not counted.
	Only []scenario.Placement
	// OnRun, if set, hears each placement's outcome as it is known,
	// from the goroutine that ran it.
	OnRun func(done, total int)

	// runInert, in tests only, runs the placements inert says cannot
	// change anything, to prove it.
	runInert bool
}

// Outcome is one placement's run, grouped.
type Outcome struct {
	Placement scenario.Placement
	Group     string // the story, in words
	// Divergence and Broken say whether the group is a divergence from
	// client-go or a broken invariant (printed first).
	Divergence, Broken bool
	Err                error // the run could not go on
	steps              []trace.StepResult
	cmds               []scenario.PlacedCmd
	result             *sim.Result
	index              int
}

// diff is, for a divergence, the step it came at and the difference; for
// a run that failed, its error; else "". The step is named as the
// report names every step, by the scenario's own numbering (stepName).
func (ex *Exploration) diff(o Outcome) string {
	switch {
	case o.Err != nil:
		return o.Err.Error()
	case o.result != nil && o.result.Divergence != nil:
		d := o.result.Divergence
		return fmt.Sprintf("%s, layer %s (-cachelab +client-go):\n%s", stepName(o.cmds, d.Step), d.Layer, strings.TrimRight(d.Diff, "\n"))
	}
	return ""
}

// stepName names step i (1-based) of a placed run as a placement names
// steps, by the explored scenario's own numbering: "step 5 (delete
// ns0/b)" for one of its steps; "the reconnect put before step 6 (show
// store)", or "the reconnect put at the end", for a fault or heal
// explore put in. The placed file's own numbering, which counts the
// faults too, would name steps the scenario does not have ("step 7
// (reconnect)" in a scenario of 6 steps).
func stepName(cmds []scenario.PlacedCmd, i int) string {
	if i < 1 || i > len(cmds) {
		panic(fmt.Sprintf("explore: step %d of a placed run of %d commands", i, len(cmds)))
	}
	c := cmds[i-1]
	if c.Step > 0 {
		return fmt.Sprintf("step %d (%s)", c.Step, c.Text)
	}
	for _, next := range cmds[i:] {
		if next.Step > 0 {
			return fmt.Sprintf("the %s put before step %d (%s)", c.Text, next.Step, next.Text)
		}
	}
	return fmt.Sprintf("the %s put at the end", c.Text)
}

// Minimal is the placement as a scenario file that tells the same story
// in the fewest steps: its run cut after the first step by which the
// story is told (a step of a run does not depend on the steps after it),
// with each step's expected output. A placement whose run failed keeps
// every command and has no output.
func (ex *Exploration) Minimal(o Outcome) string {
	about := "Group: " + o.Group + "."
	if ex.plant != "" {
		about += "\nWith a bug planted in cachelab's side: run it with --plant " + ex.plant + "."
	}
	if o.Err != nil {
		return o.Placement.Text(ex.Scenario, ex.Server, about, 0, nil)
	}
	// At least through the last fault or heal: the file shows the
	// placement, even where its story is told before it (nothing
	// visible).
	from := 1
	for i, c := range o.cmds {
		if c.Step == 0 && i < len(o.steps) {
			from = i + 1
		}
	}
	m := len(o.steps)
	for k := from; k <= len(o.steps); k++ {
		var div *trace.Divergence
		if k == len(o.steps) && o.result != nil {
			div = o.result.Divergence
		}
		if label, _, _ := ex.story(o.steps[:k], o.cmds[:k], div, ex.baseline.Steps[:baseSteps(o.cmds[:k])]); label == o.Group {
			m = k
			break
		}
	}
	outputs := make([]string, m)
	for i, sr := range o.steps[:m] {
		outputs[i] = trace.StepOutput(sr)
	}
	return o.Placement.Text(ex.Scenario, ex.Server, about, m, outputs)
}

// baseSteps is how many of the scenario's own steps cmds hold.
func baseSteps(cmds []scenario.PlacedCmd) int {
	n := 0
	for _, c := range cmds {
		if c.Step > 0 {
			n++
		}
	}
	return n
}

// Group is the placements of one story.
type Group struct {
	Label              string
	Divergence, Broken bool
	Outcomes           []Outcome // in placement order; Outcomes[0] is the shortest
}

// Exploration is what explore found.
type Exploration struct {
	Scenario *scenario.Scenario
	Server   string
	Faults   []string
	// Placements is how many placements there are in all, Refused how
	// many of them cannot stand where they are put (Parse refuses the
	// placed scenario), Inert how many cannot change anything and were
	// not run (inert), Run how many ran (all the others, or the sample).
	Placements, Refused, Inert, Run int
	Groups                          []Group
	baseline                        *sim.Result
	// What the record says of how it was run (Record).
	stack             string
	seed              uint64
	maxFaults         int
	betweenSteps      bool
	plant             string
	runnable, sampled int
	sampleSeed        uint64
	shard             string
}

// Run runs sc once without faults (the baseline) and once per
// placement, and groups the outcomes.
func Run(ctx context.Context, sc *scenario.Scenario, o Options) (*Exploration, error) {
	if len(o.Faults) == 0 {
		o.Faults = scenario.DefaultFaults
	}
	if o.MaxFaults == 0 {
		o.MaxFaults = 1
	}
	if o.Jobs < 1 {
		o.Jobs = 1
	}
	server := o.Run.Server
	if server == "" {
		server = sc.WrittenFor()
	}
	if err := checkExplore(sc, o, server); err != nil {
		return nil, err
	}
	base, err := sim.Run(ctx, sc.WithoutExpectations(), o.Run)
	if err != nil {
		return nil, fmt.Errorf("the scenario without faults: %w", err)
	}
	if base.Divergence != nil {
		return nil, fmt.Errorf("the scenario diverges from client-go without faults, at step %d (%s): explore needs a scenario that agrees", base.Divergence.Step, base.Divergence.Cmd)
	}
	ex := &Exploration{Scenario: sc, Server: server, Faults: o.Faults, baseline: base, stack: string(o.Run.Stack), seed: o.Run.Seed, maxFaults: o.MaxFaults, betweenSteps: o.BetweenSteps, plant: o.Run.Plant}
	quiet := quietGaps(base)
	var placed []placedRun
	inner := innerPoints(base)
	if o.BetweenSteps {
		inner = inside{}
	}
	all := placements(sc, o.Faults, o.MaxFaults, server, inner)
	if o.Only != nil {
		all = slices.DeleteFunc(all, func(p scenario.Placement) bool {
			return !slices.ContainsFunc(o.Only, func(q scenario.Placement) bool { return comparePlacements(p, q) == 0 })
		})
	}
	for _, p := range all {
		ex.Placements++
		if inert(p, quiet) && !o.runInert {
			ex.Inert++
			continue
		}
		text := p.Text(sc, server, "", 0, nil)
		psc, err := scenario.Parse(sc.Name+".explored.txt", []byte(text))
		if err != nil {
			ex.Refused++
			continue
		}
		placed = append(placed, placedRun{p: p, sc: psc})
	}
	ex.runnable = len(placed)
	if o.Sample > 0 && o.Sample < len(placed) {
		rng := rand.New(rand.NewPCG(o.SampleSeed, 0x5eed))
		rng.Shuffle(len(placed), func(i, j int) { placed[i], placed[j] = placed[j], placed[i] })
		placed = placed[:o.Sample]
		slices.SortFunc(placed, func(a, b placedRun) int { return comparePlacements(a.p, b.p) })
		ex.sampled, ex.sampleSeed = o.Sample, o.SampleSeed
	}
	for i := range placed {
		placed[i].index = i
	}
	if o.Shards > 1 {
		ex.shard = fmt.Sprintf("%d/%d", o.Shard, o.Shards)
		var mine []placedRun
		for _, pr := range placed {
			if pr.index%o.Shards == o.Shard {
				mine = append(mine, pr)
			}
		}
		placed = mine
	}
	ex.Run = len(placed)
	outcomes, err := ex.runAll(ctx, placed, o)
	if err != nil {
		return nil, err
	}
	ex.Groups = groupOutcomes(outcomes)
	return ex, nil
}

// runAll runs the placements, as many at once as o says (pool), and
// returns their outcomes in placement order.
func (ex *Exploration) runAll(ctx context.Context, placed []placedRun, o Options) ([]Outcome, error) {
	computing := o.Computing
	if computing < 1 || computing > o.Jobs {
		computing = o.Jobs
	}
	p := newPool(computing, o.Jobs, clock.RealClock{})
	outcomes := make([]Outcome, len(placed))
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		done int
	)
	for i := range placed {
		r := p.start(ctx)
		if r == nil {
			break
		}
		opts := o.Run
		opts.OnRealWait = func(d time.Duration) {
			p.waits(r, d)
			if o.Run.OnRealWait != nil {
				o.Run.OnRealWait(d)
			}
		}
		wg.Go(func() {
			defer p.end(r)
			outcomes[i] = ex.runPlacement(ctx, placed[i], opts)
			mu.Lock()
			defer mu.Unlock()
			done++
			if o.OnRun != nil {
				o.OnRun(done, len(placed))
			}
		})
	}
	wg.Wait()
	return outcomes, ctx.Err()
}

// quietGaps is how many gaps from the first no informer has made a
// request by, in the run without faults: before the step that makes the
// first one (gaps 1 to quietGaps).
func quietGaps(base *sim.Result) int {
	for i, sr := range base.Steps {
		for _, e := range sr.Sides[trace.Cachelab] {
			if e.Kind == trace.KindRequest {
				return i + 1
			}
		}
	}
	return len(base.Steps) + 1
}

// inert reports whether a placement cannot change anything, and need not
// run: one close-watch or compact in a quiet gap, before any informer has
// made a request. There is no watch to close then, and no resourceVersion
// an informer holds for a compaction to leave behind: its first request
// asks for the newest state ("" ), and kube-apiserver's own watch of etcd
// is at etcd's head. The run would be the one without the fault, with a
// line saying the fault happened.
func inert(p scenario.Placement, quiet int) bool {
	if len(p.Faults) != 1 {
		return false
	}
	f := p.Faults[0]
	return (f.Kind == "close-watch" || f.Kind == "compact") && f.At <= quiet && f.After == 0 && f.Page == 0
}

type placedRun struct {
	p     scenario.Placement
	sc    *scenario.Scenario
	index int // among the runnable placements
}

// InputError is explore refusing what it was asked, before anything
// runs: a fault it does not know, or one the world has not.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

// checkExplore refuses, before anything runs, a fault explore does not
// know or that the run's world does not have, and a scenario the run's
// options cannot carry out (Check).
func checkExplore(sc *scenario.Scenario, o Options, server string) error {
	if err := checkFaults(o, server, sim.WorldOf(sc, o.Run)); err != nil {
		return &InputError{Msg: err.Error()}
	}
	return sim.Check(sc, o.Run)
}

// checkFaults refuses a fault explore does not know, or whose lever the
// exploration's world w does not have (named server).
func checkFaults(o Options, server string, w lever.World) error {
	for _, f := range o.Faults {
		k, ok := scenario.LookupFault(f)
		if !ok {
			var names []string
			for _, k := range scenario.FaultKinds {
				names = append(names, k.Name)
			}
			return fmt.Errorf("unknown fault %q; explore places: %s", f, strings.Join(names, ", "))
		}
		if err := lever.Of(k.Name).Available(w); err != nil {
			var r *lever.Refused
			if errors.As(err, &r) && r.Missing == lever.OwnWatchCache {
				return fmt.Errorf("fault %s needs kube-apiserver's watch cache; this exploration's server is %q (--server %s)", f, server, scenario.ServerWatchCache)
			}
			return fmt.Errorf("fault %s: %w", f, sim.LeverAllows(k.Name, w))
		}
	}
	if o.MaxFaults < 1 || o.MaxFaults > 2 {
		return fmt.Errorf("max faults %d: explore places 1 or 2 faults per run", o.MaxFaults)
	}
	if o.Shards > 1 && (o.Shard < 0 || o.Shard >= o.Shards) {
		return fmt.Errorf("shard %d/%d: want i/n with 0 <= i < n", o.Shard, o.Shards)
	}
	return nil
}

// inside is where, inside the scenario's steps (1-based), a cut can
// fall: after which watch events (after-events=N), and after which pages
// of a LIST (after-pages=N).
type inside struct {
	events, pages map[int][]int
}

// innerPoints are the points inside each step where a cut can fall, by
// step, in the run without faults.
//
// In a step whose watches hand an informer m >= 2 events (adds,
// updates, deletes: a burst of writes, a watch-list's initial events):
// right after the first, the middle one and the last but one (k = 1,
// m/2, m-1; fewer when they coincide). Between any two of a step's
// events is a point, but most tell the same story as their neighbours,
// and a step of 10,000 events would make 10,000 runs: these three are
// the cut just after the step begins, in its middle, and just before
// its end.
//
// In a step where an informer's LISTs answer m >= 1 pages with more to
// come: after the first, the middle one and the last of them (k = 1,
// (m+1)/2, m). After the last, the final page is still to come.
//
// The counts are each informer's own; the largest is used.
func innerPoints(base *sim.Result) inside {
	in := inside{events: map[int][]int{}, pages: map[int][]int{}}
	for i, sr := range base.Steps {
		events, pages := map[string]int{}, map[string]int{}
		m, p := 0, 0
		for _, e := range sr.Sides[trace.Cachelab] {
			switch {
			case e.Layer == trace.LayerWatch && e.Kind == trace.KindEvent && (e.Op == "ADDED" || e.Op == "MODIFIED" || e.Op == "DELETED"):
				events[e.Informer]++
				m = max(m, events[e.Informer])
			case e.Layer == trace.LayerRequest && e.Op == "answer" && strings.Contains(e.Detail, " (more pages)"):
				// Behind the watch cache an answer goes on to say where it
				// came from: "... (more pages) (from etcd)".
				pages[e.Informer]++
				p = max(p, pages[e.Informer])
			}
		}
		if m >= 2 {
			in.events[i+1] = distinct(1, m/2, m-1)
		}
		if p >= 1 {
			in.pages[i+1] = distinct(1, (p+1)/2, p)
		}
	}
	return in
}

// distinct is ks without repeats, in order.
func distinct(ks ...int) []int {
	var out []int
	for _, k := range ks {
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// placements lists every placement of up to max faults of the given
// kinds, in a fixed order: fewer faults first, then by where. A fault
// goes in every gap between steps, a cut (disconnect, close-watch) also
// at each of inner's points among a step's watch events, and a
// disconnect at each of its points between a LIST's pages.
func placements(sc *scenario.Scenario, faults []string, maxFaults int, server string, inner inside) []scenario.Placement {
	n := len(sc.Steps)
	var singles []scenario.PlacedFault
	for _, name := range faults {
		k, _ := scenario.LookupFault(name)
		for at := 1; at <= n+1; at++ {
			points := []scenario.PlacedFault{{Kind: name, At: at}}
			if k.Inside {
				for _, after := range inner.events[at] {
					points = append(points, scenario.PlacedFault{Kind: name, At: at, After: after})
				}
			}
			if k.Pages {
				for _, page := range inner.pages[at] {
					points = append(points, scenario.PlacedFault{Kind: name, At: at, Page: page})
				}
			}
			for _, f := range points {
				if k.Heal == "" {
					singles = append(singles, f)
					continue
				}
				// Healed at a later gap, the last of which (n+1) is
				// after the last step: at the end. (Pulled after the
				// last step, it would be healed with nothing in
				// between.)
				for heal := at + 1; heal <= n+1; heal++ {
					f.Heal = heal
					singles = append(singles, f)
				}
			}
		}
	}
	var out []scenario.Placement
	for _, f := range singles {
		out = append(out, scenario.Placement{Faults: []scenario.PlacedFault{f}})
	}
	if maxFaults >= 2 {
		for i, a := range singles {
			for _, b := range singles[i+1:] {
				if b.At >= a.At {
					out = append(out, scenario.Placement{Faults: []scenario.PlacedFault{a, b}})
				}
			}
		}
	}
	slices.SortStableFunc(out, comparePlacements)
	return out
}

func comparePlacements(a, b scenario.Placement) int {
	if d := len(a.Faults) - len(b.Faults); d != 0 {
		return d
	}
	for i := range a.Faults {
		fa, fb := a.Faults[i], b.Faults[i]
		if d := fa.At - fb.At; d != 0 {
			return d
		}
		if d := fa.After - fb.After; d != 0 {
			return d
		}
		if d := fa.Page - fb.Page; d != 0 {
			return d
		}
		if d := fa.Heal - fb.Heal; d != 0 {
			return d
		}
		if d := strings.Compare(fa.Kind, fb.Kind); d != 0 {
			return d
		}
	}
	return 0
}

// runPlacement runs one placed scenario and names its story.
func (ex *Exploration) runPlacement(ctx context.Context, pr placedRun, opts sim.Options) Outcome {
	o := Outcome{Placement: pr.p, index: pr.index}
	res, err := sim.Run(ctx, pr.sc, opts)
	if err != nil {
		o.Err, o.Group = err, storyFailed+firstLine(err.Error())
		o.Divergence = true
		return o
	}
	o.result, o.steps, o.cmds = res, res.Steps, pr.p.Placed(ex.Scenario)
	o.Group, o.Divergence, o.Broken = ex.story(res.Steps, o.cmds, res.Divergence, ex.baseline.Steps)
	return o
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// groupOutcomes groups outcomes by story (groupBy).
func groupOutcomes(outcomes []Outcome) []Group {
	var out []Group
	for _, g := range groupBy(outcomes, func(o Outcome) (string, bool, bool) { return o.Group, o.Divergence, o.Broken },
		func(o Outcome) scenario.Placement { return o.Placement }) {
		out = append(out, Group{Label: g.label, Divergence: g.divergence, Broken: g.broken, Outcomes: g.items})
	}
	return out
}

// shorter orders placements for a group's example: fewer faults, a
// shorter stretch between fault and heal, then the earliest.
func shorter(a, b scenario.Placement) int {
	if d := len(a.Faults) - len(b.Faults); d != 0 {
		return d
	}
	span := func(p scenario.Placement) int {
		s := 0
		for _, f := range p.Faults {
			if f.Heal > 0 {
				s += f.Heal - f.At
			}
		}
		return s
	}
	if d := span(a) - span(b); d != 0 {
		return d
	}
	return comparePlacements(a, b)
}
