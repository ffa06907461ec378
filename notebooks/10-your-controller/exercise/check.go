package exercise

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/cachelab/cachelab/controllertest"
	"github.com/cachelab/cachelab/examples/fooctl"
	"github.com/cachelab/cachelab/examples/fooctl/footest"
	"github.com/cachelab/cachelab/notebooks/internal/lab"
)

// Operator is a reconcile and a delete handler to check: yours
// (reconcile.go), the reference's, or a planted mistake's.
type Operator struct {
	Reconcile func(ctx context.Context, c *fooctl.Controller, key string) error
	OnDelete  func(c *fooctl.Controller) func(obj any)
}

// Yours is reconcile.go's.
func Yours() Operator { return Operator{Reconcile, OnDelete} }

// The placements the checks play, in fooctl's story (1 crd, 2 create,
// 3 update, 4 delete): none; a partition while the Foo is deleted
// (before step 4, healed at the end: the controller relists, and learns
// of the delete only as a DeletedFinalStateUnknown); and a stop over the
// same gap (the controller that starts again hears nothing of it).
var (
	noFault             = controllertest.Placement{}
	partitionOverDelete = controllertest.Placement{Fault: "partition", At: 4, Heal: 5}
	stopOverDelete      = controllertest.Placement{Fault: "stop", At: 4, Heal: 5}
)

// Checks play fooctl's story around op, one placement each, and hold
// every invariant there: the built-in ones and the operator's
// (footest.Invariants: registered, colored). The three plays start
// together, when the first check runs: a play mostly waits.
func Checks(op Operator) []lab.Check {
	plays := sync.OnceValue(func() map[controllertest.Placement]func() controllertest.Outcome {
		out := map[controllertest.Placement]func() controllertest.Outcome{}
		for _, p := range []controllertest.Placement{noFault, partitionOverDelete, stopOverDelete} {
			out[p] = sync.OnceValue(func() controllertest.Outcome { return play(op, p) })
			go out[p]()
		}
		return out
	})
	check := func(p controllertest.Placement) func() error {
		return func() error { return verdict(op, plays()[p]()) }
	}
	return []lab.Check{
		{ID: "K2 E2", Behaviour: "no fault: each child made once", Run: check(noFault)},
		{ID: "P3 K1 E18", Behaviour: "a partition over the delete: a tombstone", Run: check(partitionOverDelete)},
		{ID: "E18", Behaviour: "a stop over the delete: no event at all", Run: check(stopOverDelete)},
	}
}

// play plays fooctl's story once around op, with p's fault, in a world
// of its own. A panic of op's code is kept (the first), and the run's
// error says where it was.
func play(op Operator, p controllertest.Placement) controllertest.Outcome {
	story, err := controllertest.ParseStory("footest/story.txt", []byte(footest.StoryFile))
	if err != nil {
		return controllertest.Outcome{Err: err}
	}
	var panicked firstPanic
	o := controllertest.Explore{
		Story:      story,
		World:      controllertest.Options{Resources: []string{"configmaps", "deployments"}},
		Controller: func(ctx context.Context, w *controllertest.World) error { return run(ctx, w, op, &panicked) },
		Namespaces: []string{fooctl.Registry},
		Unowned:    []string{fooctl.Registry},
		Invariants: footest.Invariants,
	}.Play(context.Background(), p)
	if err := panicked.get(); err != nil {
		o.Err = err
	}
	return o
}

// run runs fooctl's Controller in w with op's reconcile and delete
// handler, each turned from a panic into an error (lab.Safely).
func run(ctx context.Context, w *controllertest.World, op Operator, panicked *firstPanic) error {
	reconcile := func(ctx context.Context, c *fooctl.Controller, key string) error {
		return panicked.keep(lab.Safely(func() error { return op.Reconcile(ctx, c, key) }))
	}
	c, err := fooctl.New(fooctl.Options{Config: w.Config(), Clock: w.Clock(), Metrics: w.QueueMetrics(), Reconcile: reconcile})
	if err != nil {
		return err
	}
	var handler func(obj any)
	if err := panicked.keep(lab.Safely(func() error { handler = op.OnDelete(c); return nil })); err != nil {
		return err
	}
	if handler != nil {
		err := c.OnFooDelete(func(obj any) { panicked.keep(lab.Safely(func() error { handler(obj); return nil })) })
		if err != nil {
			return err
		}
	}
	return c.Run(ctx)
}

// firstPanic is the first panic of the code under check in a run.
type firstPanic struct {
	mu  sync.Mutex
	err error
}

// keep returns err, and keeps it if it is the run's first panic.
func (f *firstPanic) keep(err error) error {
	var p *lab.PanicError
	if errors.As(err, &p) {
		f.mu.Lock()
		if f.err == nil {
			f.err = err
		}
		f.mu.Unlock()
	}
	return err
}

func (f *firstPanic) get() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// verdict is nil if the run kept every invariant; else what the
// explorer found: what broke, what happened, and the story with its
// fault written in, which replays the run.
func verdict(op Operator, o controllertest.Outcome) error {
	if o.Kept() {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "the explorer played fooctl's story with %s,\n", o.Where)
	fmt.Fprintf(&b, "around your %s and %s:\n", lab.Func(op.Reconcile), lab.Func(op.OnDelete))
	for _, br := range o.Broken {
		fmt.Fprintf(&b, "  broke %s: %s\n", br.Invariant, br.Why)
	}
	if o.Err != nil {
		fmt.Fprintf(&b, "  could not play it to its end: %v\n", o.Err)
	}
	b.WriteString("What happened (the controller's watch requests and bookmarks left out):\n")
	for _, l := range o.Trace {
		if strings.Contains(l, "controller: GET ") || strings.Contains(l, "event: BOOKMARK ") || strings.HasPrefix(l, "the world is quiet") {
			continue
		}
		fmt.Fprintf(&b, "  %s\n", l)
	}
	b.WriteString("The story with its fault written in (controllertest.ParseStory reads it; Explore.Play of it with no fault is this run again):\n")
	b.WriteString(withoutCRD(o.File))
	return errors.New(strings.TrimRight(b.String(), "\n"))
}

// withoutCRD is a story file, indented, but for the manifest of its crd
// step (fooctl.CRD).
func withoutCRD(file string) string {
	var b strings.Builder
	inCRD := false
	for _, l := range strings.Split(strings.TrimRight(file, "\n"), "\n") {
		switch {
		case l == "crd":
			inCRD = true
			b.WriteString("  crd\n  (fooctl.CRD)\n")
			continue
		case inCRD && l != "----":
			continue
		}
		inCRD = false
		fmt.Fprintf(&b, "  %s\n", l)
	}
	return b.String()
}
