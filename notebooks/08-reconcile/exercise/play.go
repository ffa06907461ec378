package exercise

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/client-go/util/workqueue"

	"github.com/cachelab/cachelab/notebooks/internal/lab"
)

// LoopFunc is one turn of a worker: yours, the reference, or client-go's.
type LoopFunc func(context.Context, Queue, ReconcileFunc) bool

// limiterCall is one call on a limiter: When, Forget or NumRequeues.
type limiterCall struct{ op, item string }

func when(item string) limiterCall   { return limiterCall{"When", item} }
func forget(item string) limiterCall { return limiterCall{"Forget", item} }
func num(item string) limiterCall    { return limiterCall{"NumRequeues", item} }

// sameLimiter makes the same calls on client-go's exponential limiter and
// on impl's, and says where they first return different values, and
// which of impl's methods returned it.
func sameLimiter(impl Impl, base, max time.Duration, calls []limiterCall) error {
	want := workqueue.NewTypedItemExponentialFailureRateLimiter[string](base, max)
	got := impl.NewLimiter(base, max)
	for i, c := range calls {
		before := want.NumRequeues(c.item)
		w, g := limiterDo(want, c), ""
		if err := lab.Safely(func() error { g = limiterDo(got, c); return nil }); err != nil {
			return fmt.Errorf("limiter from base %v to max %v, call %d: %s(%q): %w", base, max, i+1, c.op, c.item, err)
		}
		if w != g {
			return fmt.Errorf("limiter from base %v to max %v, call %d: %s(%q), with %d failures of %s recorded since it was last forgotten:\nclient-go's limiter returns %s; yours, %s, returns %s",
				base, max, i+1, c.op, c.item, before, c.item, w, lab.Method(got, c.op), g)
		}
	}
	return nil
}

// limiterDo makes one call and renders what it returned.
func limiterDo(l workqueue.TypedRateLimiter[string], c limiterCall) string {
	switch c.op {
	case "When":
		return l.When(c.item).String()
	case "NumRequeues":
		return fmt.Sprint(l.NumRequeues(c.item))
	}
	l.Forget(c.item)
	return "nothing"
}

// turn is one turn of a story: the handler queues keys (or the
// controller shuts down), then a worker takes a turn, whose reconcile
// panics, or returns err (if not "") and RequeueAfter after. A shutdown
// turn is repeated until client-go's loop returns false: the workers
// drain what is queued.
type turn struct {
	add      []string
	shutdown bool
	panics   bool
	err      string
	after    time.Duration
}

func (t turn) String() string {
	if t.shutdown {
		return "ShutDown(), then turns until Get reports the shutdown; every reconcile succeeds"
	}
	var parts []string
	for _, k := range t.add {
		parts = append(parts, fmt.Sprintf("Add(%s)", k))
	}
	if t.panics {
		return strings.Join(append(parts, "reconcile panics"), ", ")
	}
	return strings.Join(append(parts, "reconcile returns "+outcome(t)), ", ")
}

// outcome renders what a turn's reconcile returns.
func outcome(t turn) string {
	switch {
	case t.err != "" && t.after > 0:
		return fmt.Sprintf("error %q and RequeueAfter %v", t.err, t.after)
	case t.err != "":
		return fmt.Sprintf("error %q", t.err)
	case t.after > 0:
		return fmt.Sprintf("RequeueAfter %v", t.after)
	}
	return "success"
}

// reconcilePanic is what a story's reconcile panics with.
type reconcilePanic struct{ key string }

func (p reconcilePanic) String() string { return "reconcile(" + p.key + ") panicked" }

// clientGoLoop is the reference: sample-controller's processNextWorkItem
// on client-go's workqueue, with controller-runtime's reconcileHandler
// rules for the result (K2-K5). Done is deferred, so it runs whatever
// happens; a panic in reconcile is not recovered (sample-controller's
// worker lets HandleCrash log it and crash the process).
func clientGoLoop(ctx context.Context, q Queue, reconcile ReconcileFunc) bool {
	key, shutdown := q.Get()
	if shutdown {
		return false
	}
	defer q.Done(key)
	res, err := reconcile(ctx, key)
	switch {
	case err != nil:
		q.AddRateLimited(key)
	case res.RequeueAfter > 0:
		q.Forget(key)
		q.AddAfter(key, res.RequeueAfter)
	default:
		q.Forget(key)
	}
	return true
}

// sameLoop plays turns to client-go's loop and to loop, each on its own
// client-go rate-limiting queue, and says where they first differ.
func sameLoop(loop LoopFunc, turns []turn) error {
	want, got := newRecorder(), newRecorder()
	defer want.inner.ShutDown()
	defer got.inner.ShutDown()
	for i, t := range turns {
		for n := 0; ; n++ {
			label := fmt.Sprintf("turn %d (%s)", i+1, t)
			if n > 0 {
				label = fmt.Sprintf("turn %d, shut down, again (%d)", i+1, n+1)
			}
			wantEnd := want.play(clientGoLoop, t, n)
			var gotEnd ending
			err := lab.Safely(func() error { gotEnd = got.play(loop, t, n); return nil })
			if err != nil {
				err = fmt.Errorf("%s: %w", label, err)
			} else {
				err = compareTurn(label, loop, want, got, wantEnd, gotEnd)
			}
			if err != nil {
				if i == 0 {
					return err
				}
				return fmt.Errorf("the turns before it: %s\n%v", tellTurns(turns[:i]), err)
			}
			if !t.shutdown || !wantEnd.returned {
				break
			}
		}
	}
	return nil
}

// play applies t's adds (or shutdown) the first time (n == 0), then
// takes one turn of loop, and says how the turn ended. A panic of the
// story's reconcile that comes out of loop ends the turn; any other
// panic is the loop's own, and goes on up to the lab, which reports it
// with the line that raised it.
func (r *recorder) play(loop LoopFunc, t turn, n int) (end ending) {
	if n == 0 {
		for _, k := range t.add {
			r.inner.Add(k)
		}
		if t.shutdown {
			r.inner.ShutDown()
		}
	}
	panicking := false
	reconcile := func(_ context.Context, key string) (Result, error) {
		if t.panics && !t.shutdown {
			r.record("reconcile(%s), which panicked", key)
			panicking, end.key = true, key
			panic(reconcilePanic{key})
		}
		r.record("reconcile(%s)", key)
		if t.shutdown || t.err == "" {
			return Result{RequeueAfter: t.after}, nil
		}
		return Result{RequeueAfter: t.after}, errors.New(t.err)
	}
	defer func() {
		if !panicking {
			return // no panic, or the loop's own: not ours to stop
		}
		if v := recover(); v != nil {
			if _, ours := v.(reconcilePanic); !ours {
				panic(v)
			}
			end.panicked = true
		}
	}()
	end.returned = loop(context.Background(), r, reconcile)
	return end
}

// ending is how a turn of a loop ended: it returned true or false, or
// the reconcile's panic came out of it.
type ending struct {
	returned, panicked bool
	key                string // the key whose reconcile panicked
}

func (e ending) String() string {
	if e.panicked {
		return "let the panic go on"
	}
	return fmt.Sprintf("returned %t", e.returned)
}

// tellTurns renders the turns before the one that differs: the last
// five, after a count of the earlier ones.
func tellTurns(turns []turn) string {
	const shown = 5
	var parts []string
	from := max(0, len(turns)-shown)
	if from > 0 {
		parts = append(parts, fmt.Sprintf("(%d turns before these)", from))
	}
	for i := from; i < len(turns); i++ {
		parts = append(parts, fmt.Sprintf("%d: %s", i+1, turns[i]))
	}
	return strings.Join(parts, "; ")
}
