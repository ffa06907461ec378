package exercise

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/client-go/util/workqueue"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/cachelab/cachelab/notebooks/internal/lab"
)

// recorder is a client-go rate-limiting queue (on a fake clock that
// never moves: a key given AddAfter or AddRateLimited stays waiting, and
// comes back only when a turn adds it) that writes down every call a
// loop makes on it, with the line of the loop that made it, and which
// keys a worker holds (handed out by Get, not yet Done: client-go's
// queue keeps that to itself). Its limiter is client-go's per-item
// exponential one, 5ms to 1000s (DefaultTypedControllerRateLimiter's,
// without the bucket, whose delays depend on the machine's clock).
type recorder struct {
	inner   Queue
	limiter *tracedLimiter
	log     []call
	held    map[string]bool
	doneAt  string // where the loop last called Done
}

// call is one call a loop made: on the queue, or of the reconcile.
type call struct {
	text string // "Done(web)"
	at   string // the line of the loop that made it, "loop.go:85"; "" for client-go's
}

var _ Queue = (*recorder)(nil)

func newRecorder() *recorder {
	l := &tracedLimiter{TypedRateLimiter: workqueue.NewTypedItemExponentialFailureRateLimiter[string](5*time.Millisecond, 1000*time.Second)}
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	q := workqueue.NewTypedRateLimitingQueueWithConfig[string](l, workqueue.TypedRateLimitingQueueConfig[string]{Clock: clk})
	return &recorder{inner: q, limiter: l, held: map[string]bool{}}
}

func (r *recorder) record(format string, args ...any) {
	r.log = append(r.log, call{text: fmt.Sprintf(format, args...), at: lab.Caller()})
}

func (r *recorder) take() []call {
	out := r.log
	r.log = nil
	return out
}

// state is what can be seen of the queue: how many keys are queued, each
// key's failure count, and which keys a worker holds.
func (r *recorder) state() string {
	held := "none"
	if keys := r.heldKeys(); len(keys) > 0 {
		held = strings.Join(keys, ", ")
	}
	return fmt.Sprintf("%d keys queued (Len), NumRequeues web=%d db=%d cache=%d, and keys held by a worker (Get, no Done yet): %s",
		r.inner.Len(), r.inner.NumRequeues("web"), r.inner.NumRequeues("db"), r.inner.NumRequeues("cache"), held)
}

func (r *recorder) heldKeys() []string {
	var keys []string
	for k := range r.held {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// The queue's methods: each call is written down, then passed on to
// client-go's queue.

func (r *recorder) Add(key string) {
	r.record("Add(%s)", key)
	r.inner.Add(key)
}

// Get would block for ever on a queue with nothing to hand out (the lab
// never moves the clock, so nothing waiting comes back): it fails the
// turn instead.
func (r *recorder) Get() (string, bool) {
	if r.inner.Len() == 0 && !r.inner.ShuttingDown() {
		held := ""
		if keys := r.heldKeys(); len(keys) > 0 {
			held = fmt.Sprintf("; %s, taken by a Get and never marked Done, is never handed out again, even when it is added again", strings.Join(keys, ", "))
		}
		panic("Get would wait for ever: client-go's queue has nothing to hand out" + held)
	}
	key, shutdown := r.inner.Get()
	if shutdown {
		r.record("Get() → shut down")
	} else {
		r.record("Get() → %s", key)
		r.held[key] = true
	}
	return key, shutdown
}

func (r *recorder) Done(key string) {
	r.record("Done(%s)", key)
	r.doneAt = r.log[len(r.log)-1].at
	delete(r.held, key)
	r.inner.Done(key)
}

func (r *recorder) AddAfter(key string, d time.Duration) {
	r.record("AddAfter(%s, %v)", key, d)
	r.inner.AddAfter(key, d)
}

func (r *recorder) AddRateLimited(key string) {
	r.inner.AddRateLimited(key)
	r.record("AddRateLimited(%s) (the limiter said %v)", key, r.limiter.last)
}

func (r *recorder) Forget(key string) {
	r.record("Forget(%s)", key)
	r.inner.Forget(key)
}

func (r *recorder) ShutDown() {
	r.record("ShutDown()")
	r.inner.ShutDown()
}

func (r *recorder) ShutDownWithDrain() {
	r.record("ShutDownWithDrain()")
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
