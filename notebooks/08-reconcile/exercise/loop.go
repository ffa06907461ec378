// Package exercise is chapter 8's lab: write the two pieces of a
// controller's loop that decide when a key comes back, then check them
// against client-go:
//
//	go test -tags lab -v ./notebooks/08-reconcile/exercise
//
// Every check runs your code and client-go's on the same sequences
// (some of them generated from a fixed seed, so a run is the same every
// time) and compares every value returned and every call made. The
// reference solution is in solution/; try without it first.
package exercise

import (
	"context"
	"time"

	"github.com/cachelab/cachelab/notebooks/08-reconcile/exercise/model"
)

// Result is what a reconcile returns besides its error; see the model
// package.
type Result = model.Result

// ReconcileFunc is a reconcile; see the model package.
type ReconcileFunc = model.ReconcileFunc

// Queue is client-go's rate-limiting workqueue; see the model package.
type Queue = model.Queue

// Limiter is the per-item exponential failure rate limiter, client-go's
// workqueue.TypedItemExponentialFailureRateLimiter (W13): each item's
// failures are counted, and an item with n failures recorded before this
// one waits base·2^n, at most max. The lab calls it from one goroutine;
// client-go's also holds a mutex, since workers call it at once.
type Limiter struct {
	base, max time.Duration
	// TODO: what must it remember, per item?
}

// NewLimiter returns a limiter whose delays start at base and stop
// growing at max.
func NewLimiter(base, max time.Duration) *Limiter {
	return &Limiter{base: base, max: max}
}

// When records one more failure of item and returns how long it waits:
// base·2^n, where n is the number of failures recorded before this one
// (so 5ms, 10ms, 20ms, ... from a base of 5ms), never more than max.
// Beware: base·2^n soon overflows an int64 (client-go computes it in
// float64, and anything above math.MaxInt64 nanoseconds is max).
func (l *Limiter) When(item string) time.Duration {
	// TODO
	return 0
}

// Forget stops counting item's failures: its next When waits base again.
func (l *Limiter) Forget(item string) {
	// TODO
}

// NumRequeues is how many failures of item are recorded.
func (l *Limiter) NumRequeues(item string) int {
	// TODO
	return 0
}

// ProcessNextWorkItem is one turn of a worker (K2-K5), as
// sample-controller writes it on client-go's workqueue, with
// controller-runtime's rule for RequeueAfter:
//
//   - take a key with q.Get; if the queue is shut down, return false and
//     do nothing else;
//   - reconcile(ctx, key);
//   - an error: q.AddRateLimited(key), so the key backs off (its
//     failures counted); the error wins over a RequeueAfter, which is
//     dropped;
//   - no error and RequeueAfter d > 0: q.Forget(key), then
//     q.AddAfter(key, d);
//   - no error otherwise: q.Forget(key), so its next failure waits the
//     base delay again;
//   - always q.Done(key), once, after all of these (deferred: it must
//     run whatever happens, a panic in reconcile too), then return true.
//
// Do not recover a panic of reconcile: sample-controller lets it go on
// up to the worker, whose HandleCrash logs it and crashes the process.
// The checks compare your calls with client-go's loop's in order, and
// name the line of yours where they first differ.
func ProcessNextWorkItem(ctx context.Context, q Queue, reconcile ReconcileFunc) bool {
	// TODO
	return false
}
