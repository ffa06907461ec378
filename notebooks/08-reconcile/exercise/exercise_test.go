//go:build !lab

// The maintainers' tests of the lab, which CI runs: the reference
// solution passes, the skeleton fails, every check can fail. The lab
// command (go test -tags lab) leaves them out, so that what it prints is
// the learner's sheet alone.

package exercise

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"k8s.io/client-go/util/workqueue"

	"github.com/cachelab/cachelab/factory"
	"github.com/cachelab/cachelab/informer"
	"github.com/cachelab/cachelab/notebooks/08-reconcile/exercise/skeleton"
	"github.com/cachelab/cachelab/notebooks/08-reconcile/exercise/solution"
	"github.com/cachelab/cachelab/notebooks/internal/lab"
)

// reference is the reference solution, as the checks take it.
func reference() Impl {
	return Impl{
		NewLimiter: func(base, max time.Duration) workqueue.TypedRateLimiter[string] {
			return solution.NewLimiter(base, max)
		},
		ProcessNextWorkItem: solution.ProcessNextWorkItem,
		Wire:                solution.Wire,
	}
}

// The reference solution passes every check.
func TestSolutionPasses(t *testing.T) {
	lab.SolutionPasses(t, Checks(reference()))
}

// The skeleton as handed out, kept in skeleton/ (loop.go and wire.go)
// (the learner's file may be their work by now), fails the lab, and each
// failure says what client-go does instead.
func TestSkeletonFails(t *testing.T) {
	lab.SkeletonFails(t, Checks(Impl{
		NewLimiter: func(base, max time.Duration) workqueue.TypedRateLimiter[string] {
			return skeleton.NewLimiter(base, max)
		},
		ProcessNextWorkItem: skeleton.ProcessNextWorkItem,
		Wire:                skeleton.Wire,
	}))
}

// Every check can fail, and says so where the learner can act on it:
// each plausible mistake below (the chapter warns of each) fails a check
// whose message holds the words it must, and each check is failed by at
// least one of them, so none passes whatever the code does.
func TestEachCheckCanFail(t *testing.T) {
	ref := reference()
	withLimiter := func(f flawedLimiter) Impl {
		return Impl{NewLimiter: func(base, max time.Duration) workqueue.TypedRateLimiter[string] {
			l := f
			l.base, l.max = base, max
			if !l.noMap {
				l.failures = map[string]int{}
			}
			return &l
		}, ProcessNextWorkItem: ref.ProcessNextWorkItem, Wire: ref.Wire}
	}
	withLoop := func(f flawedLoop) Impl {
		return Impl{NewLimiter: ref.NewLimiter, ProcessNextWorkItem: func(ctx context.Context, q Queue, r ReconcileFunc) bool { // planted: the loop
			return f.turn(ctx, q, r)
		}, Wire: ref.Wire}
	}
	withWire := func(w flawedWire) Impl {
		return Impl{NewLimiter: ref.NewLimiter, ProcessNextWorkItem: ref.ProcessNextWorkItem, Wire: w.wire}
	}
	when := "yours, (*flawedLimiter).When (exercise_test.go:" + lineOf(t, "// planted: When") + ")"
	num := "yours, (*flawedLimiter).NumRequeues (exercise_test.go:" + lineOf(t, "// planted: NumRequeues") + ")"
	loop := " (exercise_test.go:" + lineOf(t, "// planted: the loop") + "), called"
	mistakes := []struct {
		name string
		impl Impl
		says []string
	}{
		{"the delay doubles from the first failure (base·2^(n+1))", withLimiter(flawedLimiter{skipFirst: true}),
			[]string{"client-go's limiter returns 5ms", when, "returns 10ms"}},
		{"no cap", withLimiter(flawedLimiter{noCap: true}),
			[]string{"client-go's limiter returns 16m40s", when, "returns 21m50.72s"}},
		{"integer arithmetic that overflows", withLimiter(flawedLimiter{shift: true}),
			[]string{"call 42", "client-go's limiter returns 16m40s", when, "returns -2069896h36m35.949551616s"}},
		{"converted to a Duration before the overflow check", withLimiter(flawedLimiter{convertFirst: true}),
			[]string{"client-go's limiter returns 16m40s", when, "returns -2562047h47m16.854775808s"}},
		{"Forget does nothing", withLimiter(flawedLimiter{noForget: true}),
			[]string{`NumRequeues("web"), with 0 failures of web recorded since it was last forgotten`, "client-go's limiter returns 0", num, "returns 3"}},
		{"one count for every item", withLimiter(flawedLimiter{shared: true}),
			[]string{`NumRequeues("db"), with 0 failures of db recorded`, "client-go's limiter returns 0", num, "returns 1"}},
		{"no map made for the counts", withLimiter(flawedLimiter{noMap: true}),
			[]string{"your code panicked at exercise_test.go:" + lineOf(t, "// planted: the nil map") + ", in (*flawedLimiter).When: assignment to entry in nil map"}},
		{"Done only on success", withLoop(flawedLoop{doneOnSuccessOnly: true}),
			[]string{`reconcile returns error "boom"`, loop, "Yours never makes client-go's Done(web). Without it web stays held by a worker for ever", "from Len 0 to 1, and yours from Len 0 to 0"}},
		{"Done at the end, not deferred", withLoop(flawedLoop{notDeferred: true}),
			[]string{"reconcile panics", loop, "which panicked, and let the panic go on.",
				"Yours never makes client-go's Done(web). client-go's loop defers Done, so it runs even when reconcile panics. Your Done, at exercise_test.go:" + lineOf(t, "// planted: Done, not deferred") + ", was not reached on this turn.",
				"from Len 0 to 1, and yours from Len 0 to 0 (web is only marked dirty), and no Get hands it out again"}},
		{"Done before reconcile", withLoop(flawedLoop{doneFirst: true}),
			[]string{loop, "Yours makes the same calls in another order: Done(web) (at exercise_test.go:" + lineOf(t, "// planted: Done first") + ") where client-go's loop makes reconcile(web)", "a second worker"}},
		{"Done before the requeue", withLoop(flawedLoop{doneBeforeRequeue: true}),
			[]string{loop, "Yours makes the same calls in another order: Done(web) (at exercise_test.go:" + lineOf(t, "// planted: Done before the requeue") + ") where client-go's loop makes Forget(web)", "calls Done last (deferred)"}},
		{"Done twice (deferred, and at the end)", withLoop(flawedLoop{doneTwice: true}),
			[]string{loop, "Yours makes Done(web) (at exercise_test.go:", "which client-go's loop does not. Each Get has exactly one Done"}},
		{"the reconcile's panic recovered", withLoop(flawedLoop{recoverPanic: true}),
			[]string{"reconcile panics", "and let the panic go on;", loop, "and returned true.", "does not recover a reconcile's panic"}},
		{"Done at shutdown", withLoop(flawedLoop{doneAtShutdown: true}),
			[]string{"shut down", "Yours makes Done() (at exercise_test.go:" + lineOf(t, "// planted: Done at shutdown") + "), which client-go's loop does not"}},
		{"no Forget on success", withLoop(flawedLoop{noForget: true}),
			[]string{"reconcile returns success", loop, "Yours never makes client-go's Forget(web)."}},
		{"Forget on error too", withLoop(flawedLoop{forgetOnError: true}),
			[]string{loop, "Yours makes Forget(web) (at exercise_test.go:" + lineOf(t, "// planted: Forget on error") + "), which client-go's loop does not."}},
		{"RequeueAfter wins over the error", withLoop(flawedLoop{afterWins: true}),
			[]string{loop, "Yours makes AddAfter(web, 1h0m0s) (at exercise_test.go:", "where client-go's loop makes AddRateLimited(web) (the limiter said 5ms)"}},
		{"RequeueAfter without Forget", withLoop(flawedLoop{afterNoForget: true}),
			[]string{loop, "Yours never makes client-go's Forget(web)."}},
		{"an error requeued with Add", withLoop(flawedLoop{errAdd: true}),
			[]string{loop, "Yours makes Add(web) (at exercise_test.go:", "where client-go's loop makes AddRateLimited(web) (the limiter said 5ms)"}},
		{"false as soon as the queue shuts down, without draining it", withLoop(flawedLoop{noDrain: true}),
			[]string{"turn 4 (ShutDown()", "client-go's loop called Get() → cache", loop, "called nothing, and returned false.", "Yours never calls Get, so it takes no key. After ShutDown, Get still hands out what is queued (W3)"}},
		{"true at shutdown", withLoop(flawedLoop{trueAtShutdown: true}),
			[]string{"client-go's loop called Get() → shut down, and returned false;", loop, "called Get() → shut down, and returned true."}},
	}
	mistakes = append(mistakes, []struct {
		name string
		impl Impl
		says []string
	}{
		{"a factory per controller", withWire(flawedWire{factoryEach: true}),
			[]string{"2 requests for pods are 2 informers of pods: did each controller make a factory of its own?"}},
		{"configmaps asked for after Start", withWire(flawedWire{lateConfigMaps: true}),
			[]string{"Nothing asked the server for configmaps: was the informer asked for after Start?"}},
		{"configmaps asked for after Start, and waited for", withWire(flawedWire{lateConfigMaps: true, waitLate: true}),
			[]string{`Wire returned the error "configmaps did not sync"`}},
		{"no Start", withWire(flawedWire{noStart: true}),
			[]string{"the scaler's pods informer had not synced when Wire returned", "a factory never started starts nothing"}},
	}...)
	var planted []lab.Mistake
	for _, m := range mistakes {
		planted = append(planted, lab.Mistake{Name: m.name, Checks: Checks(m.impl), Says: m.says})
	}
	lab.MistakesFail(t, Checks(ref), planted)
}

// lineOf is the line of this file that ends with marker, where a planted
// mistake is: the line its report must point at.
func lineOf(t *testing.T, marker string) string {
	t.Helper()
	return lab.LineOf(t, "exercise_test.go", marker)
}

// flawedLimiter is the reference limiter with one mistake switched on.
type flawedLimiter struct {
	base, max                                 time.Duration
	skipFirst, noCap, shift, noForget, shared bool
	convertFirst, noMap                       bool
	failures                                  map[string]int
}

func (l *flawedLimiter) key(item string) string {
	if l.shared {
		return ""
	}
	return item
}

func (l *flawedLimiter) When(item string) time.Duration { // planted: When
	k := l.key(item)
	n := l.failures[k]
	l.failures[k] = n + 1 // planted: the nil map
	if l.skipFirst {
		n++
	}
	var d time.Duration
	switch b := float64(l.base) * math.Pow(2, float64(n)); {
	case l.shift:
		d = l.base << n // overflows past 2^63
	case l.convertFirst:
		d = time.Duration(b) // past 2^63 the conversion gives math.MinInt64 on amd64
	case b > math.MaxInt64:
		d = time.Duration(math.MaxInt64)
	default:
		d = time.Duration(b)
	}
	if l.noCap {
		return d
	}
	return min(d, l.max)
}

func (l *flawedLimiter) Forget(item string) {
	if !l.noForget {
		delete(l.failures, l.key(item))
	}
}

func (l *flawedLimiter) NumRequeues(item string) int { // planted: NumRequeues
	return l.failures[l.key(item)]
}

// flawedLoop is the reference loop with one mistake switched on.
type flawedLoop struct {
	doneOnSuccessOnly, noForget, afterWins, afterNoForget, errAdd, trueAtShutdown bool
	notDeferred, doneFirst, doneBeforeRequeue, doneTwice, recoverPanic            bool
	doneAtShutdown, forgetOnError, noDrain                                        bool
}

func (f flawedLoop) turn(ctx context.Context, q Queue, reconcile ReconcileFunc) (more bool) {
	if f.noDrain && q.ShuttingDown() {
		return false
	}
	key, shutdown := q.Get()
	if shutdown {
		if f.doneAtShutdown {
			q.Done(key) // planted: Done at shutdown
		}
		return f.trueAtShutdown
	}
	if f.recoverPanic {
		defer func() {
			if recover() != nil {
				more = true
			}
		}()
	}
	if f.doneFirst {
		q.Done(key) // planted: Done first
	}
	deferred := !f.notDeferred && !f.doneFirst && !f.doneBeforeRequeue && !f.doneOnSuccessOnly
	if deferred {
		defer q.Done(key)
	}
	res, err := reconcile(ctx, key)
	if f.doneBeforeRequeue {
		q.Done(key) // planted: Done before the requeue
	}
	switch {
	case err != nil && res.RequeueAfter > 0 && f.afterWins:
		q.AddAfter(key, res.RequeueAfter)
	case err != nil && f.errAdd:
		q.Add(key)
	case err != nil:
		if f.forgetOnError {
			q.Forget(key) // planted: Forget on error
		}
		q.AddRateLimited(key)
	case res.RequeueAfter > 0:
		if !f.afterNoForget {
			q.Forget(key)
		}
		q.AddAfter(key, res.RequeueAfter)
	case !f.noForget:
		q.Forget(key)
	}
	if f.notDeferred || f.doneOnSuccessOnly && err == nil {
		q.Done(key) // planted: Done, not deferred
	}
	if f.doneTwice {
		q.Done(key)
	}
	return true
}

// flawedWire is a Wire with one of the mistakes the chapter warns of.
type flawedWire struct {
	factoryEach    bool // each controller makes its own factory
	lateConfigMaps bool // the labeler asks for configmaps after Start
	waitLate       bool // ... and waits for it, until the lab's context ends
	noStart        bool // the factory is never started
}

func (f flawedWire) wire(ctx context.Context, newFactory func() *factory.Factory) (Wired, error) {
	scaler := newFactory()
	labeler := scaler
	if f.factoryEach {
		labeler = newFactory()
	}
	w := Wired{ScalerPods: scaler.ForResource(Pods).Informer(), LabelerPods: labeler.ForResource(Pods).Informer()}
	if !f.lateConfigMaps {
		w.LabelerConfigMaps = labeler.ForResource(ConfigMaps).Informer()
	}
	if !f.noStart {
		scaler.Start(ctx)
		labeler.Start(ctx)
	}
	scaler.WaitForCacheSync(ctx)
	labeler.WaitForCacheSync(ctx)
	if f.lateConfigMaps {
		w.LabelerConfigMaps = labeler.ForResource(ConfigMaps).Informer()
		if f.waitLate {
			bounded, stop := context.WithTimeout(ctx, time.Second)
			defer stop()
			if !informer.WaitFor(bounded, "", w.LabelerConfigMaps.HasSyncedChecker()) {
				return w, errors.New("configmaps did not sync")
			}
		}
	}
	return w, nil
}
