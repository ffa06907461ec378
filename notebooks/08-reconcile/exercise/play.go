package exercise

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/client-go/util/workqueue"
	clocktesting "k8s.io/utils/clock/testing"
)

// LoopFunc is one turn of a worker: yours, the reference, or client-go's.
type LoopFunc func(context.Context, Queue, ReconcileFunc) bool

// limiterCall is one call on a limiter: When, Forget or NumRequeues.
type limiterCall struct{ op, item string }

func when(item string) limiterCall   { return limiterCall{"When", item} }
func forget(item string) limiterCall { return limiterCall{"Forget", item} }
func num(item string) limiterCall    { return limiterCall{"NumRequeues", item} }

// sameLimiter makes the same calls on client-go's exponential limiter and
// on impl's, and says where they first return different values.
func sameLimiter(impl Impl, base, max time.Duration, calls []limiterCall) error {
	want := workqueue.NewTypedItemExponentialFailureRateLimiter[string](base, max)
	got := impl.NewLimiter(base, max)
	for i, c := range calls {
		before := want.NumRequeues(c.item)
		w, g := limiterDo(want, c), limiterDo(got, c)
		if w != g {
			return fmt.Errorf("limiter from base %v to max %v, call %d: %s(%q), with %d failures of %s recorded since it was last forgotten:\nclient-go's limiter returns %s; yours returns %s",
				base, max, i+1, c.op, c.item, before, c.item, w, g)
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
// returns err (if not "") and RequeueAfter after. A shutdown turn is
// repeated until client-go's loop returns false: the workers drain what
// is queued.
type turn struct {
	add      []string
	shutdown bool
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

// clientGoLoop is the reference: sample-controller's processNextWorkItem
// on client-go's workqueue, with controller-runtime's reconcileHandler
// rules for the result (K2-K5).
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
			wantRet := want.play(clientGoLoop, t, n)
			gotRet := got.play(loop, t, n)
			label := fmt.Sprintf("turn %d (%s)", i+1, t)
			if n > 0 {
				label = fmt.Sprintf("turn %d, shut down, again (%d)", i+1, n+1)
			}
			if err := compareTurn(label, want, got, wantRet, gotRet); err != nil {
				if i == 0 {
					return err
				}
				return fmt.Errorf("the turns before it: %s\n%v", tellTurns(turns[:i]), err)
			}
			if !t.shutdown || !wantRet {
				break
			}
		}
	}
	return nil
}

// compareTurn compares what one turn did on each side: the calls on the
// queue (in any order), the value returned, then the queue's state.
func compareTurn(label string, want, got *recorder, wantRet, gotRet bool) error {
	w, g := want.take(), got.take()
	if !sameCalls(w, g) || wantRet != gotRet {
		return fmt.Errorf("%s:\nclient-go's loop called %s, and returned %t;\nyours called %s, and returned %t",
			label, calls(w), wantRet, calls(g), gotRet)
	}
	if ws, gs := want.state(), got.state(); ws != gs {
		return fmt.Errorf("%s: it made the same calls, but then\nclient-go's queue holds %s;\nyours holds %s", label, ws, gs)
	}
	return nil
}

// sameCalls compares two turns' calls as multisets: Forget before or
// after AddAfter, or Done before or after them, come to the same.
func sameCalls(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func calls(c []string) string {
	if len(c) == 0 {
		return "nothing"
	}
	return strings.Join(c, ", ")
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

// recorder is a client-go rate-limiting queue (on a fake clock that
// never moves: a key given AddAfter or AddRateLimited stays waiting, and
// comes back only when a turn adds it) that writes down every call a
// loop makes on it. Its limiter is client-go's per-item exponential one,
// 5ms to 1000s (DefaultTypedControllerRateLimiter's, without the bucket,
// whose delays depend on the machine's clock).
type recorder struct {
	inner   Queue
	limiter *tracedLimiter
	log     []string
}

var _ Queue = (*recorder)(nil)

func newRecorder() *recorder {
	l := &tracedLimiter{TypedRateLimiter: workqueue.NewTypedItemExponentialFailureRateLimiter[string](5*time.Millisecond, 1000*time.Second)}
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	q := workqueue.NewTypedRateLimitingQueueWithConfig[string](l, workqueue.TypedRateLimitingQueueConfig[string]{Clock: clk})
	return &recorder{inner: q, limiter: l}
}

// play applies t's adds (or shutdown) the first time (n == 0), then
// takes one turn of loop.
func (r *recorder) play(loop LoopFunc, t turn, n int) bool {
	if n == 0 {
		for _, k := range t.add {
			r.inner.Add(k)
		}
		if t.shutdown {
			r.inner.ShutDown()
		}
	}
	reconcile := func(_ context.Context, key string) (Result, error) {
		r.log = append(r.log, fmt.Sprintf("reconcile(%s)", key))
		if t.shutdown || t.err == "" {
			return Result{RequeueAfter: t.after}, nil
		}
		return Result{RequeueAfter: t.after}, errors.New(t.err)
	}
	return loop(context.Background(), r, reconcile)
}

func (r *recorder) take() []string {
	out := r.log
	r.log = nil
	return out
}

// state is what can be seen of the queue: how many keys are queued, and
// each key's failure count.
func (r *recorder) state() string {
	return fmt.Sprintf("%d keys queued (Len), and NumRequeues web=%d db=%d cache=%d",
		r.inner.Len(), r.inner.NumRequeues("web"), r.inner.NumRequeues("db"), r.inner.NumRequeues("cache"))
}

// The queue's methods: each call that changes the queue is written down,
// then passed on to client-go's queue.

func (r *recorder) Add(key string) {
	r.log = append(r.log, fmt.Sprintf("Add(%s)", key))
	r.inner.Add(key)
}

// Get would block for ever on a queue with nothing to hand out (the lab
// never moves the clock, so nothing waiting comes back): it fails the
// turn instead.
func (r *recorder) Get() (string, bool) {
	if r.inner.Len() == 0 && !r.inner.ShuttingDown() {
		panic("Get would wait for ever: client-go's queue has nothing to hand out (a key a worker took and never marked Done is never handed out again, even when it is added again)")
	}
	key, shutdown := r.inner.Get()
	if shutdown {
		r.log = append(r.log, "Get() → shut down")
	} else {
		r.log = append(r.log, fmt.Sprintf("Get() → %s", key))
	}
	return key, shutdown
}

func (r *recorder) Done(key string) {
	r.log = append(r.log, fmt.Sprintf("Done(%s)", key))
	r.inner.Done(key)
}

func (r *recorder) AddAfter(key string, d time.Duration) {
	r.log = append(r.log, fmt.Sprintf("AddAfter(%s, %v)", key, d))
	r.inner.AddAfter(key, d)
}

func (r *recorder) AddRateLimited(key string) {
	r.inner.AddRateLimited(key)
	r.log = append(r.log, fmt.Sprintf("AddRateLimited(%s) (the limiter said %v)", key, r.limiter.last))
}

func (r *recorder) Forget(key string) {
	r.log = append(r.log, fmt.Sprintf("Forget(%s)", key))
	r.inner.Forget(key)
}

func (r *recorder) ShutDown() {
	r.log = append(r.log, "ShutDown()")
	r.inner.ShutDown()
}

func (r *recorder) ShutDownWithDrain() {
	r.log = append(r.log, "ShutDownWithDrain()")
	r.inner.ShutDownWithDrain()
}

func (r *recorder) Len() int                   { return r.inner.Len() }
func (r *recorder) ShuttingDown() bool         { return r.inner.ShuttingDown() }
func (r *recorder) NumRequeues(key string) int { return r.inner.NumRequeues(key) }

// tracedLimiter remembers the last delay its When gave.
type tracedLimiter struct {
	workqueue.TypedRateLimiter[string]
	last time.Duration
}

func (l *tracedLimiter) When(key string) time.Duration {
	l.last = l.TypedRateLimiter.When(key)
	return l.last
}
