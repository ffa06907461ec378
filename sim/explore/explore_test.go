package explore

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/sim/scenario"
	"github.com/cachelab/cachelab/sim/trace"
)

// exploreSmall explores add-update-delete with the given faults: 6 steps,
// a few seconds of runs.
func exploreSmall(t *testing.T, opts Options) (*scenario.Scenario, *Exploration) {
	t.Helper()
	sc, err := sim.Load("add-update-delete")
	if err != nil {
		t.Fatal(err)
	}
	opts.Run.Seed = 1
	ex, err := Run(context.Background(), sc, opts)
	if err != nil {
		t.Fatal(err)
	}
	return sc, ex
}

// The scenario passes with its faults where its author put them (it has
// none); with a bug that drops a relist's tombstones planted in cachelab,
// exploring the placements of one disconnect finds it: a group of
// divergences in the handler's layer, printed first, whose minimal file
// diverges the same way when run on its own with the bug, and agrees
// without it.
func TestExploreFindsAPlantedBug(t *testing.T) {
	const plant = "drop-relist-tombstones"
	_, ex := exploreSmall(t, Options{Faults: []string{"disconnect"}, Jobs: 2, Run: sim.Options{Plant: plant}})
	if len(ex.Groups) == 0 || !ex.Groups[0].Divergence {
		t.Fatalf("no divergence group first; groups: %v", groupLabels(ex))
	}
	g := ex.Groups[0]
	if g.Label != "client-go differs in layer handler/h1" {
		t.Errorf("first group %q, want the handler's layer", g.Label)
	}
	file := ex.Minimal(g.Outcomes[0])
	sc, err := scenario.Parse("minimal.txt", []byte(file))
	if err != nil {
		t.Fatalf("the minimal file does not parse: %v\n%s", err, file)
	}
	res, err := sim.Run(context.Background(), sc.WithoutExpectations(), sim.Options{Seed: 1, Plant: plant})
	if err != nil {
		t.Fatal(err)
	}
	if d := res.Divergence; d == nil || d.Layer != "handler/h1" || d.Step != len(sc.Steps) {
		t.Errorf("the minimal file with the bug: divergence %+v, want one in handler/h1 at its last step (%d)\n%s", d, len(sc.Steps), file)
	}
	res, err = sim.Run(context.Background(), sc.WithoutExpectations(), sim.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Divergence != nil {
		t.Errorf("the minimal file without the bug diverges: %v", res.Divergence)
	}
}

// The second planted bug is in cachelab's reflector: it watches again
// from one revision before the last one it had, so a re-watch gets the
// last event again. add-update-delete never watches again, and passes
// with the bug; exploring its close-watch placements finds it: a
// divergence group first, whose minimal file diverges the same way run
// alone with the bug and agrees without it.
func TestExploreFindsAPlantedRewatchBug(t *testing.T) {
	const plant = "rewatch-one-back"
	_, ex := exploreSmall(t, Options{Faults: []string{"close-watch"}, Jobs: 4, Run: sim.Options{Plant: plant}})
	if len(ex.Groups) == 0 || !ex.Groups[0].Divergence {
		t.Fatalf("no divergence group first; groups: %v", groupLabels(ex))
	}
	g := ex.Groups[0]
	file := ex.Minimal(g.Outcomes[0])
	sc, err := scenario.Parse("minimal.txt", []byte(file))
	if err != nil {
		t.Fatalf("the minimal file does not parse: %v\n%s", err, file)
	}
	res, err := sim.Run(context.Background(), sc.WithoutExpectations(), sim.Options{Seed: 1, Plant: plant})
	if err != nil {
		t.Fatal(err)
	}
	if d := res.Divergence; d == nil || "client-go differs in layer "+d.Layer != g.Label || d.Step != len(sc.Steps) {
		t.Errorf("the minimal file with the bug: divergence %+v, want one in the group's layer (%s) at its last step (%d)\n%s", d, g.Label, len(sc.Steps), file)
	}
	res, err = sim.Run(context.Background(), sc.WithoutExpectations(), sim.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Divergence != nil {
		t.Errorf("the minimal file without the bug diverges: %v", res.Divergence)
	}
}

func groupLabels(ex *Exploration) []string {
	var out []string
	for _, g := range ex.Groups {
		out = append(out, g.Label)
	}
	return out
}

// Every group's minimal file replays to the same story, with the same
// trace it holds as expected output; and the exploration is the same
// one at a time as three at once, one computing and the others run
// while a run waits out a relist backoff (Options.Computing).
func TestExploreMinimalFilesReplay(t *testing.T) {
	// A seeded sample of the placements (a third of them, with four
	// stories among them), to keep CI's -race run short.
	faults := []string{"disconnect", "close-watch", "compact"}
	_, ex := exploreSmall(t, Options{Faults: faults, Jobs: 3, Computing: 1, Sample: 10, SampleSeed: 1})
	if len(ex.Groups) < 4 {
		t.Fatalf("only %d groups: %v", len(ex.Groups), groupLabels(ex))
	}
	for _, g := range ex.Groups {
		t.Run(g.Label, func(t *testing.T) {
			o := g.Outcomes[0]
			file := ex.Minimal(o)
			res := replayMinimal(t, file, "")
			cmds := o.cmds[:len(res.Steps)]
			label, _, _ := ex.story(res.Steps, cmds, res.Divergence, ex.baseline.Steps[:baseSteps(cmds)])
			if label != g.Label {
				t.Errorf("the minimal file tells %q, want %q\n%s", label, g.Label, file)
			}
		})
	}
	_, one := exploreSmall(t, Options{Faults: faults, Jobs: 1, Sample: 10, SampleSeed: 1})
	if d := cmp.Diff(summaryOf(one), summaryOf(ex)); d != "" {
		t.Errorf("one at a time (-) and three at once (+) grouped differently:\n%s", d)
	}
}

// summaryOf is an exploration as its report shows it: each group's label,
// size and minimal file.
func summaryOf(ex *Exploration) []string {
	var out []string
	for _, g := range ex.Groups {
		out = append(out, g.Label, strings.Repeat("#", len(g.Outcomes)), ex.Minimal(g.Outcomes[0]))
	}
	return out
}

// The placements explore does not run because they cannot change
// anything (inert) change nothing when run: each tells "nothing visible".
func TestInertPlacementsChangeNothing(t *testing.T) {
	sc, err := sim.Load("add-update-delete")
	if err != nil {
		t.Fatal(err)
	}
	ex, err := Run(context.Background(), sc, Options{Faults: []string{"close-watch", "compact"}, Jobs: 4,
		Run: sim.Options{Seed: 1}, runInert: true})
	if err != nil {
		t.Fatal(err)
	}
	quiet, n := quietGaps(ex.baseline), 0
	for _, g := range ex.Groups {
		for _, o := range g.Outcomes {
			if inert(o.Placement, quiet) {
				n++
				if g.Label != storyNothing {
					t.Errorf("%s: %q, want %q", o.Placement.Describe(sc), g.Label, storyNothing)
				}
			}
		}
	}
	if n != 2*quiet {
		t.Errorf("%d inert placements, want %d (close-watch and compact in each of %d quiet gaps)", n, 2*quiet, quiet)
	}
}

// A cut (disconnect, close-watch) is also placed inside each step whose
// watch hands an informer two or more events in the run without faults:
// right after the first, the middle one and the last but one. Each
// inner placement's minimal file says after-events=N, replays to the
// output it holds, and tells its group's story; a disconnect after the
// first of three creates, healed at the next step, delivers the other
// two a step later.
func TestExploreCutsInsideAStep(t *testing.T) {
	sc, err := scenario.Parse("burst.txt", []byte("# A burst.\n# Server: etcd\n\nadd-handler h1\n----\n\nstart\n----\n\ncreate ns0/a ns0/b ns0/c\n----\n\ndelete ns0/a\n----\n"))
	if err != nil {
		t.Fatal(err)
	}
	ex, err := Run(context.Background(), sc, Options{Faults: []string{"disconnect", "close-watch"}, Jobs: 4, Run: sim.Options{Seed: 1}})
	if err != nil {
		t.Fatal(err)
	}
	inner, got := placedWhere(ex, func(f scenario.PlacedFault) bool { return f.After > 0 })
	want := []string{
		"close-watch inside step 3 (create ns0/a ns0/b ns0/c), after its first watch event",
		"disconnect inside step 3 (create ns0/a ns0/b ns0/c), after its first watch event, reconnect before step 4 (delete ns0/a)",
		"disconnect inside step 3 (create ns0/a ns0/b ns0/c), after its first watch event, reconnect at the end",
		"close-watch inside step 3 (create ns0/a ns0/b ns0/c), after its first 2 watch events",
		"disconnect inside step 3 (create ns0/a ns0/b ns0/c), after its first 2 watch events, reconnect before step 4 (delete ns0/a)",
		"disconnect inside step 3 (create ns0/a ns0/b ns0/c), after its first 2 watch events, reconnect at the end",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("the placements inside a step (-want +got):\n%s", d)
	}
	for _, o := range inner {
		file := ex.Minimal(o)
		if !strings.Contains(file, "after-events=") {
			t.Errorf("%s: the minimal file does not arm the cut:\n%s", o.Placement.Describe(sc), file)
		}
		replayMinimal(t, file, o.Placement.Describe(sc)+": ")
		if o.Placement.Describe(sc) == want[1] && o.Group != "the same calls, some at a later step" {
			t.Errorf("%s tells %q; the two creates after the cut should reach the handler a step later", want[1], o.Group)
		}
	}
}

// A disconnect is also placed between the pages of a paged LIST: with
// 501 objects and watch-list off, the informers' first LIST comes in two
// pages of 500 and 1, and the cut falls after the first. Each such
// placement's minimal file says after-pages=1 and replays to the output
// it holds. Healed before the compaction, the second page is read at the
// list's revision and the create made meanwhile comes as a watch event;
// healed after it, the continue token has expired (E4), and the pager
// lists again in full.
func TestExploreCutsBetweenPages(t *testing.T) {
	sc, err := scenario.Parse("pages.txt", []byte("# Pages.\n# Server: etcd\n\nserver watch-list=off\n----\n\nbulk-create n=501\n----\n\nadd-handler h1\n----\n\nstart\n----\n\ncreate bulk/late\n----\n\ncompact\n----\n"))
	if err != nil {
		t.Fatal(err)
	}
	ex, err := Run(context.Background(), sc, Options{Faults: []string{"disconnect"}, Jobs: 2, Run: sim.Options{Seed: 1}})
	if err != nil {
		t.Fatal(err)
	}
	paged, got := placedWhere(ex, func(f scenario.PlacedFault) bool { return f.Page > 0 })
	want := []string{
		"disconnect inside step 4 (start), after its first LIST page with more to come, reconnect before step 5 (create bulk/late)",
		"disconnect inside step 4 (start), after its first LIST page with more to come, reconnect before step 6 (compact)",
		"disconnect inside step 4 (start), after its first LIST page with more to come, reconnect at the end",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("the placements between pages (-want +got):\n%s", d)
	}
	for i, o := range paged {
		file := ex.Minimal(o)
		if !strings.Contains(file, "disconnect after-pages=1") {
			t.Errorf("%s: the minimal file does not arm the cut:\n%s", want[i], file)
		}
		replayMinimal(t, file, want[i]+": ")
		expired := false
		for _, sr := range o.steps {
			for _, e := range sr.Sides[trace.Cachelab] {
				expired = expired || strings.Contains(e.Detail, "continue parameter is too old")
			}
		}
		if wantExpired := i == 2; expired != wantExpired {
			t.Errorf("%s: the continue token expired: %v, want %v", want[i], expired, wantExpired)
		}
	}
}

// A LIST answer with more pages to come is a point between pages in
// either world: behind the watch cache the answer also says where it
// was read from.
func TestPagePointsInEitherWorld(t *testing.T) {
	answer := func(detail string) trace.Event {
		return trace.Event{Layer: trace.LayerRequest, Kind: trace.KindRequest, Op: "answer", Detail: detail}
	}
	base := &sim.Result{Steps: []trace.StepResult{
		{Sides: map[string][]trace.Event{trace.Cachelab: {answer("  -> 500 items, rv 502 (more pages)")}}},
		{Sides: map[string][]trace.Event{trace.Cachelab: {answer("  -> 500 items, rv 502 (more pages) (from etcd)")}}},
		{Sides: map[string][]trace.Event{trace.Cachelab: {answer("  -> 1 items, rv 502 (from etcd)")}}},
	}}
	want := map[int][]int{1: {1}, 2: {1}}
	if d := cmp.Diff(want, innerPoints(base).pages); d != "" {
		t.Errorf("points between pages, by step (-want +got):\n%s", d)
	}
}

// placedWhere is the exploration's outcomes of one fault that keep
// keeps, in the order of their placements, and each placement described.
func placedWhere(ex *Exploration, keep func(scenario.PlacedFault) bool) ([]Outcome, []string) {
	var out []Outcome
	for _, g := range ex.Groups {
		for _, o := range g.Outcomes {
			if len(o.Placement.Faults) == 1 && keep(o.Placement.Faults[0]) {
				out = append(out, o)
			}
		}
	}
	slices.SortFunc(out, func(a, b Outcome) int { return comparePlacements(a.Placement, b.Placement) })
	var described []string
	for _, o := range out {
		described = append(described, o.Placement.Describe(ex.Scenario))
	}
	return out, described
}

// Each built-in scenario's "# Explore:" hints name a placement and the
// story it tells: each placement is run (explore with only it) and tells
// that story. The catalog shows them, so they must not go stale.
func TestExploreHints(t *testing.T) {
	cat, err := sim.Catalog()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, sc := range cat {
		if len(sc.Hints) == 0 {
			continue
		}
		t.Run(sc.Name, func(t *testing.T) {
			var only []scenario.Placement
			kinds := map[string]bool{}
			for _, h := range sc.Hints {
				only = append(only, h.Placement())
				kinds[h.Fault.Kind] = true
			}
			faults := slices.Sorted(maps.Keys(kinds))
			ex, err := Run(context.Background(), sc, Options{Faults: faults, Jobs: len(only), Only: only, Run: sim.Options{Seed: 1}})
			if err != nil {
				t.Fatal(err)
			}
			told := map[string]string{}
			for _, g := range ex.Groups {
				for _, o := range g.Outcomes {
					told[o.Placement.Describe(sc)] = o.Group
				}
			}
			for _, h := range sc.Hints {
				where := h.Placement().Describe(sc)
				got, ok := told[where]
				switch {
				case !ok:
					t.Errorf("the hint %s was not run (inert, or refused where it stands)", where)
				case got != h.Story:
					t.Errorf("the hint %s says:\n  %s\nexplore tells:\n  %s", where, h.Story, got)
				}
			}
		})
		n += len(sc.Hints)
	}
	if n < 5 {
		t.Errorf("the catalog has %d explore hints; the scenarios with interesting placements should say so", n)
	}
}

// A story says which way calls moved: the same calls later, earlier, or
// both (each call's n-th time matched with its n-th time); and a
// relist's unchanged update that does not come is told, not passed over
// (the helper who wrote chapter 9 found both told wrongly: calls that
// came earlier were "at a later step", and a missing unchanged update
// went untold).
func TestStoriesTellWhichWayCallsMoved(t *testing.T) {
	tc := func(what string, at int) timedCall { return timedCall{what, at} }
	base := []timedCall{tc("add a", 4), tc("add b", 4), tc("update a", 10)}
	for _, c := range []struct {
		got  []timedCall
		want string
	}{
		{[]timedCall{tc("add a", 4), tc("add b", 4), tc("update a", 10)}, ""},
		{[]timedCall{tc("add a", 4), tc("add b", 5), tc("update a", 10)}, storyLater},
		{[]timedCall{tc("add a", 4), tc("add b", 4), tc("update a", 7)}, storyEarlier},
		{[]timedCall{tc("add a", 6), tc("add b", 4), tc("update a", 7)}, storyMoved},
	} {
		if got := moved(base, c.got); got != c.want {
			t.Errorf("moved(%v, %v) = %q, want %q", base, c.got, got, c.want)
		}
	}
	same := call{handler: "h1", op: "OnUpdate", key: "ns0/a", rv: "2", prevRV: "2"}
	add := call{handler: "h1", op: "OnAdd", key: "ns0/a", rv: "2"}
	if got := keyStory(map[call]int{add: 1, same: 1}, map[call]int{add: 1}); !slices.Equal(got, []string{storyNoResend}) {
		t.Errorf("a missing unchanged update tells %q, want %q", got, storyNoResend)
	}
}

// BetweenSteps leaves out the placements inside a step, and the record
// says so (its report's header too).
func TestExploreBetweenSteps(t *testing.T) {
	sc, err := scenario.Parse("burst.txt", []byte("# A burst.\n# Server: etcd\n\nadd-handler h1\n----\n\nstart\n----\n\ncreate ns0/a ns0/b ns0/c\n----\n"))
	if err != nil {
		t.Fatal(err)
	}
	ex, err := Run(context.Background(), sc, Options{Faults: []string{"close-watch"}, Jobs: 4, BetweenSteps: true, Run: sim.Options{Seed: 1}})
	if err != nil {
		t.Fatal(err)
	}
	rec := ex.Record()
	for _, o := range rec.Outcomes {
		if o.Faults[0].After > 0 {
			t.Errorf("a placement inside a step: %s", o.Placement)
		}
	}
	var b strings.Builder
	rec.WriteReport(&b, nil)
	if !rec.BetweenSteps || !strings.Contains(b.String(), "· between steps only ·") {
		t.Errorf("the record does not say the faults went between steps only:\n%s", b.String())
	}
	// The same without it has the two cuts inside the burst (after its
	// first event, and before its last).
	all, err := Run(context.Background(), sc, Options{Faults: []string{"close-watch"}, Jobs: 4, Run: sim.Options{Seed: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if all.Placements != ex.Placements+2 {
		t.Errorf("%d placements with the cuts inside the step, %d without; want 2 more", all.Placements, ex.Placements)
	}
}

// Every story has a key of its own, and a group's label gives back the
// keys of its stories in order: those joined with "; ", and those that
// name what they found after their label. Every label the explorer joins
// is one of Stories.
func TestStoryKeys(t *testing.T) {
	seen := map[string]bool{}
	for _, st := range Stories {
		if seen[st.Key] {
			t.Errorf("key %q twice", st.Key)
		}
		seen[st.Key] = true
		label := st.Label
		if st.Prefix {
			label += "something found"
		}
		if got := StoryKeys(label); !slices.Equal(got, []string{st.Key}) {
			t.Errorf("StoryKeys(%q) = %v, want [%s]", label, got, st.Key)
		}
	}
	for _, l := range storyOrder {
		if slices.Contains(StoryKeys(l), "unknown") {
			t.Errorf("the joined story %q is not one of Stories", l)
		}
	}
	joined := storyNeverSeen + "; " + storyLateAdd
	if got := StoryKeys(joined); !slices.Equal(got, []string{"never-seen", "first-seen-later"}) {
		t.Errorf("StoryKeys(%q) = %v", joined, got)
	}
	if got := StoryKeys("a story nobody tells"); !slices.Equal(got, []string{"unknown"}) {
		t.Errorf("an unknown story: %v", got)
	}
}

// replayMinimal runs a group's minimal file and reports each step whose
// output is not what the file holds (each error begins with about).
func replayMinimal(t *testing.T, file, about string) *sim.Result {
	t.Helper()
	sc, err := scenario.Parse("minimal.txt", []byte(file))
	if err != nil {
		t.Fatalf("%s%v\n%s", about, err, file)
	}
	res, err := sim.Run(context.Background(), sc, sim.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i, sr := range res.Steps {
		if out := trace.StepOutput(sr); out != sc.Steps[i].Expected {
			t.Errorf("%sstep %d (%s) printed:\n%s\nthe file holds:\n%s", about, i+1, sc.Steps[i].Text, out, sc.Steps[i].Expected)
		}
	}
	return res
}
