package exercise

import (
	"context"
	"math"
	"testing"
	"time"

	"k8s.io/client-go/util/workqueue"

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
	}
}

// The reference solution passes every check.
func TestSolutionPasses(t *testing.T) {
	lab.SolutionPasses(t, Checks(reference()))
}

// skeletonSum is the SHA-256 of loop.go as committed: the untouched
// skeleton. Once you edit loop.go this test steps aside.
const skeletonSum = "144ce755063d7b69a20057dca1d642a54fc4c05793e3edc4f90a78bb26ea6958"

// The untouched skeleton fails the lab, and each failure says what
// client-go does instead.
func TestSkeletonFails(t *testing.T) {
	lab.SkeletonFails(t, "loop.go", skeletonSum, Checks(Yours()))
}

// Every check can fail: each is failed by at least one plausible mistake,
// so none passes whatever the code does.
func TestEachCheckCanFail(t *testing.T) {
	ref := reference()
	withLimiter := func(f func(base, max time.Duration) workqueue.TypedRateLimiter[string]) Impl {
		return Impl{NewLimiter: f, ProcessNextWorkItem: ref.ProcessNextWorkItem}
	}
	withLoop := func(f LoopFunc) Impl { return Impl{NewLimiter: ref.NewLimiter, ProcessNextWorkItem: f} }
	mistakes := map[string]Impl{
		"the delay doubles from the first failure (base·2^(n+1))": withLimiter(func(base, max time.Duration) workqueue.TypedRateLimiter[string] {
			return &flawedLimiter{base: base, max: max, skipFirst: true}
		}),
		"no cap": withLimiter(func(base, max time.Duration) workqueue.TypedRateLimiter[string] {
			return &flawedLimiter{base: base, max: max, noCap: true}
		}),
		"integer arithmetic that overflows": withLimiter(func(base, max time.Duration) workqueue.TypedRateLimiter[string] {
			return &flawedLimiter{base: base, max: max, shift: true}
		}),
		"Forget does nothing": withLimiter(func(base, max time.Duration) workqueue.TypedRateLimiter[string] {
			return &flawedLimiter{base: base, max: max, noForget: true}
		}),
		"one count for every item": withLimiter(func(base, max time.Duration) workqueue.TypedRateLimiter[string] {
			return &flawedLimiter{base: base, max: max, shared: true}
		}),
		"Done only on success":             withLoop(flawedLoop{doneOnSuccessOnly: true}.turn),
		"no Forget on success":             withLoop(flawedLoop{noForget: true}.turn),
		"RequeueAfter wins over the error": withLoop(flawedLoop{afterWins: true}.turn),
		"RequeueAfter without Forget":      withLoop(flawedLoop{afterNoForget: true}.turn),
		"an error requeued with Add":       withLoop(flawedLoop{errAdd: true}.turn),
		"true at shutdown":                 withLoop(flawedLoop{trueAtShutdown: true}.turn),
	}
	runs := map[string][]lab.Check{}
	for name, m := range mistakes {
		runs[name] = Checks(m)
		if lab.Passed(lab.Run(runs[name])) {
			t.Errorf("mistake %q passes every check", name)
		}
	}
	lab.EachCanFail(t, Checks(ref), runs)
}

// flawedLimiter is the reference limiter with one mistake switched on.
type flawedLimiter struct {
	base, max                                 time.Duration
	skipFirst, noCap, shift, noForget, shared bool
	failures                                  map[string]int
}

func (l *flawedLimiter) key(item string) string {
	if l.failures == nil {
		l.failures = map[string]int{}
	}
	if l.shared {
		return ""
	}
	return item
}

func (l *flawedLimiter) When(item string) time.Duration {
	k := l.key(item)
	n := l.failures[k]
	l.failures[k] = n + 1
	if l.skipFirst {
		n++
	}
	var d time.Duration
	if l.shift {
		d = l.base << n // overflows past 2^63
	} else {
		d = time.Duration(math.MaxInt64)
		if b := float64(l.base) * math.Pow(2, float64(n)); b <= math.MaxInt64 {
			d = time.Duration(b)
		}
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

func (l *flawedLimiter) NumRequeues(item string) int { return l.failures[l.key(item)] }

// flawedLoop is the reference loop with one mistake switched on.
type flawedLoop struct {
	doneOnSuccessOnly, noForget, afterWins, afterNoForget, errAdd, trueAtShutdown bool
}

func (f flawedLoop) turn(ctx context.Context, q Queue, reconcile ReconcileFunc) bool {
	key, shutdown := q.Get()
	if shutdown {
		return f.trueAtShutdown
	}
	res, err := reconcile(ctx, key)
	switch {
	case err != nil && res.RequeueAfter > 0 && f.afterWins:
		q.AddAfter(key, res.RequeueAfter)
	case err != nil && f.errAdd:
		q.Add(key)
	case err != nil:
		q.AddRateLimited(key)
	case res.RequeueAfter > 0:
		if !f.afterNoForget {
			q.Forget(key)
		}
		q.AddAfter(key, res.RequeueAfter)
	case !f.noForget:
		q.Forget(key)
	}
	if err == nil || !f.doneOnSuccessOnly {
		q.Done(key)
	}
	return true
}
