package listandwatch_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/cachelab/cachelab/listwatch"
	"github.com/cachelab/cachelab/reflector"
)

// bench is one cachelab reflector over an embedded etcd, on a fake clock,
// with what a cell needs to watch it work and to pull the server's levers.
type bench struct {
	ctx    context.Context
	etcd   *listwatch.Embedded
	lw     *listwatch.ListerWatcher // levers: DropWatches, HoldWatches, ReleaseWatches
	writer *listwatch.Writer
	clock  *clocktesting.FakeClock
	r      *reflector.Reflector
	store  *recorder
	steps  chan reflector.Event // the reflector's trace, in order
	waits  chan time.Duration   // the reflector has started a wait on the clock
	opened chan struct{}        // the server has opened a WATCH
	stop   func()
}

// start runs a reflector with opts over a new etcd holding the named pods
// (in namespace "shop"). It fills in the clock, a seeded random source and
// the trace, so that every run of a cell prints the same.
func start(opts reflector.Options, pods ...string) *bench {
	ctx, cancel := context.WithCancel(context.Background())
	etcd, err := listwatch.StartEmbedded(ctx, listwatch.EmbeddedOptions{})
	if err != nil {
		panic(err)
	}
	b := &bench{
		ctx:    ctx,
		etcd:   etcd,
		lw:     listwatch.NewListerWatcher(etcd.Client(), listwatch.Pods, listwatch.Options{}),
		writer: listwatch.NewWriter(etcd.Client(), listwatch.Pods, listwatch.WriterOptions{}),
		clock:  clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)),
		store:  &recorder{},
		steps:  make(chan reflector.Event, 1000),
		waits:  make(chan time.Duration, 100),
		opened: make(chan struct{}, 100),
	}
	for _, name := range pods {
		b.create(name)
	}
	opts.Clock = reportingClock{b.clock, b.waits}
	opts.Rand = rand.New(rand.NewPCG(1, 2))
	opts.Trace = func(e reflector.Event) { b.steps <- e }
	b.r = reflector.New(announcing{b.lw, b.opened}, b.store, opts)
	done := make(chan struct{})
	go func() { defer close(done); b.r.Run(ctx) }()
	b.stop = func() {
		cancel()
		<-done
		etcd.Close()
	}
	return b
}

// follow prints the reflector's steps, one line each, up to and including
// the first step of kind last. When the reflector waits a backoff delay,
// follow moves the fake clock on by exactly that delay, once the wait has
// started: a cell never sleeps.
func follow(b *bench, last reflector.Step) {
	for e := range b.steps {
		fmt.Println(line(e))
		if e.Step == reflector.StepRelistBackoff || e.Step == reflector.StepRewatchBackoff {
			<-b.waits
			b.clock.Step(e.Delay)
		}
		if e.Step == last {
			return
		}
	}
}

// line prints one step of a reflector's trace.
func line(e reflector.Event) string {
	s := fmt.Sprintf("%-15s", e.Step)
	switch e.Step {
	case reflector.StepWatchList, reflector.StepList, reflector.StepWatch:
		s += fmt.Sprintf(" rv=%q", e.Options.ResourceVersion)
		if e.Options.Limit > 0 {
			s += fmt.Sprintf(" limit=%d", e.Options.Limit)
		}
	case reflector.StepReplace:
		s += fmt.Sprintf(" %d object(s) at rv=%s", e.Count, e.RV)
	case reflector.StepEvent:
		s += fmt.Sprintf(" %s %s", e.Type, nameAt(e.Object))
		if u, ok := e.Object.(*unstructured.Unstructured); ok && u.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true" {
			s += " (initial-events-end)"
		}
	case reflector.StepRelistBackoff, reflector.StepRewatchBackoff:
		s += fmt.Sprintf(" %v", e.Delay.Round(time.Millisecond))
	case reflector.StepResync:
	default:
		s += " " + reason(e.Err)
	}
	return strings.TrimRight(s, " ")
}

// reason says in a few words why a watch or a request ended.
func reason(err error) string {
	var short *reflector.VeryShortWatchError
	var status apierrors.APIStatus
	switch {
	case err == nil:
		return "closed normally"
	case errors.As(err, &short):
		return "very short watch (under 1s, no events)"
	case errors.As(err, &status):
		return fmt.Sprintf("%d %s", status.Status().Code, status.Status().Reason)
	}
	return err.Error()
}

// nameAt prints an object as name@resourceVersion.
func nameAt(obj any) string {
	u := obj.(*unstructured.Unstructured)
	return u.GetName() + "@" + u.GetResourceVersion()
}

func pod(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("Pod")
	u.SetNamespace("shop")
	u.SetName(name)
	return u
}

// create, relabel and remove write to etcd as kube-apiserver would.
func (b *bench) create(name string) {
	if _, err := b.writer.Create(b.ctx, pod(name)); err != nil {
		panic(err)
	}
}

func (b *bench) relabel(name, version string) {
	u := pod(name)
	u.SetLabels(map[string]string{"version": version})
	if _, err := b.writer.Update(b.ctx, u); err != nil {
		panic(err)
	}
}

func (b *bench) remove(name string) {
	if _, err := b.writer.Delete(b.ctx, "shop", name, listwatch.Preconditions{}); err != nil {
		panic(err)
	}
}

// compact makes etcd forget every revision before the current one.
func (b *bench) compact() {
	rev, err := b.etcd.Revision(b.ctx)
	if err == nil {
		err = b.etcd.Compact(b.ctx, rev)
	}
	if err != nil {
		panic(err)
	}
}

// reportingClock is a fake clock that reports each wait the reflector
// starts on it (a backoff's After, the resync timer), once the wait is
// registered: a cell that then steps the clock cannot step too early.
type reportingClock struct {
	*clocktesting.FakeClock
	waits chan<- time.Duration
}

func (c reportingClock) After(d time.Duration) <-chan time.Time {
	ch := c.FakeClock.After(d)
	c.waits <- d
	return ch
}

func (c reportingClock) NewTimer(d time.Duration) clock.Timer {
	t := c.FakeClock.NewTimer(d)
	c.waits <- d
	return t
}

// announcing is the etcd ListerWatcher, telling the cell when a WATCH is
// open (so that a lever that ends open watches finds it there).
type announcing struct {
	*listwatch.ListerWatcher
	opened chan<- struct{}
}

func (a announcing) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	w, err := a.ListerWatcher.WatchWithContext(ctx, opts)
	if err == nil {
		a.opened <- struct{}{}
	}
	return w, err
}

// recorder is a reflector's store that only records the calls it gets.
type recorder struct {
	mu  sync.Mutex
	log []string
}

func (s *recorder) note(format string, args ...any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = append(s.log, fmt.Sprintf(format, args...))
	return nil
}

func (s *recorder) Add(obj any) error    { return s.note("Add(%s)", nameAt(obj)) }
func (s *recorder) Update(obj any) error { return s.note("Update(%s)", nameAt(obj)) }
func (s *recorder) Delete(obj any) error { return s.note("Delete(%s)", nameAt(obj)) }
func (s *recorder) Resync() error        { return s.note("Resync()") }

func (s *recorder) Replace(objs []any, rv string) error {
	names := make([]string, len(objs))
	for i, o := range objs {
		names[i] = nameAt(o)
	}
	slices.Sort(names) // a watch-list's objects come from a map
	return s.note("Replace([%s], %q)", strings.Join(names, " "), rv)
}

// calls returns the calls so far, one per line.
func (s *recorder) calls() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.log, "\n")
}
