package yourcontroller_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/cachelab/cachelab/controllertest"
	"github.com/cachelab/cachelab/examples/fooctl"
	"github.com/cachelab/cachelab/examples/fooctl/footest"
)

// operator runs fooctl's operator in the world w until ctx ends: Fixed,
// or Mistaken with its cleanup on delete. The operator is unchanged; the
// world gives it three things: where the server is, a clock for its
// work queue, and a place for its queue to report how many keys it
// holds.
func operator(mistaken bool) func(ctx context.Context, w *controllertest.World) error {
	return func(ctx context.Context, w *controllertest.World) error {
		c, err := fooctl.Operator(fooctl.Options{
			Config:  w.Config(),       // its clients reach the world's kube-apiserver
			Clock:   w.Clock(),        // its queue's backoffs wait on the world's clock
			Metrics: w.QueueMetrics(), // the world counts the keys in its queue
		}, mistaken)
		if err != nil {
			return err
		}
		return c.Run(ctx)
	}
}

// explorer explores fooctl's operator, fixed or mistaken, with the
// story fooctl's own tests use (examples/fooctl/footest/story.txt): a
// Foo made, its color changed, and deleted.
func explorer(mistaken bool) controllertest.Explore {
	story, err := controllertest.ParseStory("story.txt", []byte(footest.StoryFile))
	if err != nil {
		panic(err)
	}
	return controllertest.Explore{
		Story:      story,
		World:      controllertest.Options{Resources: []string{"configmaps", "deployments"}},
		Controller: operator(mistaken),
		Namespaces: []string{fooctl.Registry}, // where it registers each Foo
		Unowned:    []string{fooctl.Registry}, // a registration has no owner
		Invariants: footest.Invariants,        // registered, colored
	}
}

// play plays the story once, around the operator (fixed or mistaken),
// with the fault of p. Each play is made once, and the first starts
// every play the cells make (warm): a play mostly waits, on the world
// settling and on client-go's relist backoff, so many at once cost
// little more than one.
func play(mistaken bool, p controllertest.Placement) controllertest.Outcome {
	warming.Do(warm)
	return start(mistaken, p)()
}

// start starts a play, once, and returns what waits for its outcome.
func start(mistaken bool, p controllertest.Placement) func() controllertest.Outcome {
	key := fmt.Sprintf("%v %+v", mistaken, p)
	mu.Lock()
	once, ok := plays[key]
	if !ok {
		once = sync.OnceValue(func() controllertest.Outcome { return explorer(mistaken).Play(context.Background(), p) })
		plays[key] = once
		go once()
	}
	mu.Unlock()
	return once
}

// plays are the plays made or started, by operator and placement.
var (
	mu      sync.Mutex
	plays   = map[string]func() controllertest.Outcome{}
	warming sync.Once
)

// finish waits for every play started to end (TestMain, before it looks
// for goroutines left behind).
func finish() {
	mu.Lock()
	defer mu.Unlock()
	for _, once := range plays {
		once()
	}
}

// warm starts every play the cells make, and returns at once.
func warm() {
	for _, p := range []struct {
		mistaken bool
		at       controllertest.Placement
	}{
		{true, noFault}, {true, partitionOverDelete}, {true, stopOverDelete},
		{false, noFault}, {false, partitionOverDelete}, {false, stopOverDelete},
	} {
		start(p.mistaken, p.at)
	}
}

// The placements the cells play: none, a partition while the Foo is
// deleted (before step 4, healed at the end), and a stop of the
// controller over the same gap.
var (
	noFault             = controllertest.Placement{}
	partitionOverDelete = controllertest.Placement{Fault: "partition", At: 4, Heal: 5}
	stopOverDelete      = controllertest.Placement{Fault: "stop", At: 4, Heal: 5}
)

// show prints what a run broke, and what happened at the commands of its
// placed story that start with one of commands: each command, then the
// lines it led to.
func show(o controllertest.Outcome, commands ...string) {
	fmt.Printf("%s: %s\n", o.Where, verdict(o))
	for _, b := range o.Broken {
		fmt.Printf("  %s: %s\n", b.Invariant, b.Why)
	}
	if o.Err != nil {
		fmt.Printf("  error: %v\n", o.Err)
	}
	printing := false
	for _, l := range o.Trace {
		if !strings.HasPrefix(l, " ") {
			printing = slices.ContainsFunc(commands, func(c string) bool { return strings.HasPrefix(l, c) })
		}
		if printing {
			fmt.Println(l)
		}
	}
}

// verdict is what a run broke, as the report names its group.
func verdict(o controllertest.Outcome) string {
	if o.Err != nil {
		return "error"
	}
	if o.Kept() {
		return "kept every invariant"
	}
	return "broke " + strings.Join(o.BrokenInvariants(), ", ")
}

// summary prints a report as its String does, but for a broken group's
// first run (its trace and its file): the baseline's verdict, then each
// group's verdict and placements.
func summary(rep *controllertest.Report) {
	fmt.Printf("explored %s: the baseline and %d placements\n", rep.Story, rep.Placements())
	fmt.Printf("baseline (no faults): %s\n", verdict(rep.Baseline))
	for _, g := range rep.Groups {
		fmt.Printf("%d placements %s:\n", len(g.Outcomes), g.Verdict)
		for _, o := range g.Outcomes {
			fmt.Printf("  - %s\n", o.Where)
		}
	}
}

// printFile prints a story file, but for the manifest of its crd step
// (fooctl.CRD), which it counts.
func printFile(file string) {
	inCRD, n := false, 0
	for _, l := range strings.Split(strings.TrimRight(file, "\n"), "\n") {
		switch {
		case l == "crd":
			inCRD = true
		case inCRD && l == "----":
			fmt.Printf("(fooctl.CRD: %d lines)\n", n)
			inCRD = false
		case inCRD:
			n++
			continue
		}
		fmt.Println(l)
	}
}

// grep prints the command of a run's trace that starts with command, and
// the lines under it that hold one of words.
func grep(o controllertest.Outcome, command string, words ...string) {
	in := false
	for _, l := range o.Trace {
		if !strings.HasPrefix(l, " ") {
			in = strings.HasPrefix(l, command)
			if in {
				fmt.Println(l)
			}
			continue
		}
		if in && slices.ContainsFunc(words, func(w string) bool { return strings.Contains(l, w) }) {
			fmt.Println(l)
		}
	}
}

// playVariant plays an operator with fooctl's further mistakes (a
// fooctl.Variant) with the fault of p, as fooctl's own tests explore it:
// fooctl's story, or, for an operator that reports each Foo's color in
// its status (v.Status), the story that makes one Foo
// (footest/status.txt); the operator's invariants, kept and, with
// v.Status, reported. Each play is made once, as play's are.
func playVariant(v fooctl.Variant, p controllertest.Placement) controllertest.Outcome {
	key := fmt.Sprintf("%s %+v", v, p)
	mu.Lock()
	once, ok := plays[key]
	if !ok {
		once = sync.OnceValue(func() controllertest.Outcome {
			e, err := footest.ExplorerOf(footest.Fooctl, v)
			if err != nil {
				panic(err)
			}
			return e.Play(context.Background(), p)
		})
		plays[key] = once
	}
	mu.Unlock()
	return once()
}

// stopOverUpdate is a stop of the controller before step 3 (the update),
// started again before step 4 (the delete).
var stopOverUpdate = controllertest.Placement{Fault: "stop", At: 3, Heal: 4}
