package controllertest

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/cachelab/cachelab/sim/scenario"
)

// Explore is an exploration of a controller: its story played once
// without faults (the baseline), then once per placement of the faults,
// each run in a world of its own with the controller started anew.
type Explore struct {
	// Story is what happens around the controller.
	Story *Story
	// World is what each run's world serves; the story's crd steps are
	// added to its CRDs.
	World Options
	// Controller runs the controller under test in w until ctx ends. It
	// builds its clients from w.Config(), and gives its work queues
	// w.Clock() and w.QueueMetrics(). Explore calls it through
	// World.Run.
	Controller func(ctx context.Context, w *World) error
	// Faults are the faults placed (DefaultFaults if empty): each at
	// every gap between two steps, before the first and after the last,
	// and one that heals (disconnect) healed at every later gap.
	Faults []string
	// Invariants are checked after Builtin's, in order.
	Invariants []Invariant
	// Skip names built-in invariants not to check.
	Skip []string
	// ManyChildren are the resources an owner may control several of
	// (a ReplicaSet's pods): no-duplicates leaves them alone.
	ManyChildren []string
	// Namespaces are made before the controller starts, beside the
	// story's own.
	Namespaces []string
	// Unowned are namespaces whose objects need no owner (no-orphans
	// leaves them alone): what the controller keeps there stands for a
	// system outside the cluster, which its own invariants check.
	Unowned []string
	// Quiet is how long the world's clock runs after the story, all
	// faults healed, before the invariants are checked (2 minutes if 0):
	// a requeue's backoff, a resync, a poll of the controller's come due
	// in it.
	Quiet time.Duration
	// Jobs is how many placements run at once (1 if 0).
	Jobs int
}

// An Outcome is one run: where its faults were, what broke, and what
// happened.
type Outcome struct {
	// Placement is where the fault was (none for the baseline).
	Placement Placement
	// Where says it in words.
	Where string
	// Broken are the invariants broken, each with what broke it, in the
	// order they were checked.
	Broken []Broken
	// Err is why the run could not be played to its end (the world did
	// not settle, the controller returned), or nil.
	Err error
	// Trace is what happened, a line per command and per request of the
	// controller's (or the garbage collector's deletes) it led to.
	Trace []string
	// File is the placed story as a file: ParseStory reads it, and
	// playing it with no further faults is this run again.
	File string
}

// Broken is an invariant broken, and how.
type Broken struct {
	Invariant, Why string
}

// BrokenInvariants are the names of the invariants o broke, in the order
// they were checked (nil if none).
func (o Outcome) BrokenInvariants() []string {
	var names []string
	for _, b := range o.Broken {
		names = append(names, b.Invariant)
	}
	return names
}

// verdict names an outcome's group: the invariants it broke, or the error
// it ended with.
func (o Outcome) verdict() string {
	if o.Err != nil {
		return "error: " + firstLine(o.Err.Error())
	}
	names := o.BrokenInvariants()
	if len(names) == 0 {
		return "kept every invariant"
	}
	return "broke " + strings.Join(names, ", ")
}

func firstLine(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }

// Run explores: the baseline, then every placement.
func (e Explore) Run(ctx context.Context) (*Report, error) {
	if err := e.check(); err != nil {
		return nil, err
	}
	rep := &Report{Story: e.Story.Name(), Baseline: e.Play(ctx, Placement{})}
	ps := e.placements()
	outs := make([]Outcome, len(ps))
	jobs := max(e.Jobs, 1)
	var wg sync.WaitGroup
	next := make(chan int)
	for range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				outs[i] = e.Play(ctx, ps[i])
			}
		}()
	}
	for i := range ps {
		next <- i
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rep.group(outs)
	return rep, nil
}

func (e Explore) check() error {
	if e.Story == nil || e.Controller == nil {
		return fmt.Errorf("controllertest: Explore needs a Story and a Controller")
	}
	for _, f := range e.faults() {
		if _, ok := faultKind(f); !ok {
			return fmt.Errorf("controllertest: Explore.Faults: no fault %q", f)
		}
	}
	for _, s := range e.Skip {
		if !slices.ContainsFunc(Builtin, func(i Invariant) bool { return i.Name == s }) {
			return fmt.Errorf("controllertest: Explore.Skip: no built-in invariant %q", s)
		}
	}
	return nil
}

func (e Explore) faults() []string {
	if len(e.Faults) == 0 {
		return DefaultFaults
	}
	return e.Faults
}

// placements are every placement of one fault: at each gap (1 is before
// the first step, n+1 after the last), healed at each later one; but
// those whose story, written out, is no story (a stop placed where the
// story's own stop has stopped the controller already).
func (e Explore) placements() []Placement {
	n := e.Story.Steps()
	var out []Placement
	add := func(p Placement) {
		if _, err := ParseStory("placed.txt", []byte(e.file(p, ""))); err == nil {
			out = append(out, p)
		}
	}
	for _, name := range e.faults() {
		k, _ := faultKind(name)
		for at := 1; at <= n+1; at++ {
			if k.Heal == "" {
				add(Placement{Fault: name, At: at})
				continue
			}
			for heal := at + 1; heal <= n+1; heal++ {
				add(Placement{Fault: name, At: at, Heal: heal})
			}
		}
	}
	return out
}

// Play runs the story once with the faults of p, in a world of its own.
func (e Explore) Play(ctx context.Context, p Placement) Outcome {
	out := Outcome{Placement: p, Where: p.describe(e.Story.sc)}
	out.File = e.file(p, out.Where)
	opts := e.World
	opts.CRDs = append(slices.Clone(opts.CRDs), e.Story.CRDs()...)
	w, err := Start(ctx, opts)
	if err != nil {
		out.Err = err
		return out
	}
	defer w.Close()
	r := &runLog{w: w}
	out.Err = e.play(ctx, w, p, r)
	out.Trace = r.lines
	if out.Err == nil {
		out.Broken, out.Err = e.verdicts(ctx, w, r)
	}
	return out
}

func (e Explore) play(ctx context.Context, w *World, p Placement, r *runLog) error {
	if err := w.Prepare(ctx, e.Story, e.Namespaces...); err != nil {
		return err
	}
	w.Run(func(ctx context.Context) error { return e.Controller(ctx, w) })
	if err := w.SettleAndCollect(ctx); err != nil {
		return err
	}
	r.step("the controller starts")
	sc := e.Story.sc
	for _, c := range p.commands(sc) {
		var st *scenario.Step
		if c.step > 0 {
			st = &sc.Steps[c.step-1]
		}
		err := w.Do(ctx, e.Story, st, c.text)
		r.step(c.text)
		if err != nil {
			return fmt.Errorf("%s: %w", c.text, err)
		}
		if err := e.always(ctx, w, r, c.text); err != nil {
			return err
		}
	}
	half := e.quiet() / 2
	if err := w.Advance(ctx, half); err != nil {
		return err
	}
	r.step(fmt.Sprintf("the world is quiet for %v", half))
	r.quietFrom, r.quietTaken = len(w.Requests(ControllerUser)), w.queues.taken()
	if err := w.Advance(ctx, half); err != nil {
		return err
	}
	r.step(fmt.Sprintf("the world is quiet for %v more", half))
	return nil
}

func (e Explore) quiet() time.Duration { return cmp.Or(max(e.Quiet, 0), 2*time.Minute) }

// invariants are the invariants e checks, in order.
func (e Explore) invariants() []Invariant {
	var out []Invariant
	for _, inv := range Builtin {
		if !slices.Contains(e.Skip, inv.Name) {
			out = append(out, inv)
		}
	}
	return append(out, e.Invariants...)
}

// end is the world as it is now, for the invariants.
func (e Explore) end(ctx context.Context, w *World) (*End, error) {
	objs, err := w.Objects(ctx)
	if err != nil {
		return nil, err
	}
	return &End{Objects: objs, Requests: w.Requests(ControllerUser), AllRequests: w.Requests(""), Story: w.storyMade(),
		ManyChildren: e.ManyChildren, Unowned: e.Unowned}, nil
}

// always checks the Always invariants not yet broken after a command.
func (e Explore) always(ctx context.Context, w *World, r *runLog, after string) error {
	if !slices.ContainsFunc(e.invariants(), func(i Invariant) bool { return i.Always }) {
		return nil
	}
	end, err := e.end(ctx, w)
	if err != nil {
		return err
	}
	for _, inv := range e.invariants() {
		if inv.Always && !r.brokenYet(inv.Name) {
			if err := inv.Check(end); err != nil {
				r.broken = append(r.broken, Broken{inv.Name, "after " + after + ": " + err.Error()})
			}
		}
	}
	return nil
}

// verdicts checks the invariants on the world at its end; one broken
// after a command already is not checked again.
func (e Explore) verdicts(ctx context.Context, w *World, r *runLog) ([]Broken, error) {
	end, err := e.end(ctx, w)
	if err != nil {
		return nil, err
	}
	end.QuietReconciles = w.queues.taken() - r.quietTaken
	for _, q := range end.Requests[r.quietFrom:] {
		if q.Method != "GET" {
			end.QuietWrites = append(end.QuietWrites, q)
		}
	}
	broken := r.broken
	for _, inv := range e.invariants() {
		if r.brokenYet(inv.Name) {
			continue
		}
		if err := inv.Check(end); err != nil {
			broken = append(broken, Broken{inv.Name, err.Error()})
		}
	}
	// In the order the invariants are checked, whenever they broke.
	order := e.invariants()
	slices.SortStableFunc(broken, func(a, b Broken) int {
		return slices.IndexFunc(order, func(i Invariant) bool { return i.Name == a.Invariant }) -
			slices.IndexFunc(order, func(i Invariant) bool { return i.Name == b.Invariant })
	})
	return broken, nil
}

// file is the story with p's faults in it, as a file.
func (e Explore) file(p Placement, where string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s, with faults: %s.\n", strings.TrimSuffix(e.Story.sc.Title, "."), where)
	for _, c := range p.commands(e.Story.sc) {
		input := ""
		if c.step > 0 {
			input = e.Story.sc.Steps[c.step-1].Input
		}
		fmt.Fprintf(&b, "\n%s\n%s----\n", c.text, input)
	}
	return b.String()
}

// storyMade are the uids of the objects the story created.
func (w *World) storyMade() map[types.UID]bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return maps.Clone(w.made)
}
