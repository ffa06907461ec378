// Package solution holds the reference solution of chapter 8's lab.
package solution

import (
	"context"
	"math"
	"time"

	"github.com/cachelab/cachelab/notebooks/08-reconcile/exercise/model"
)

// Limiter is the per-item exponential failure rate limiter
// (client-go: util/workqueue/default_rate_limiters.go
// TypedItemExponentialFailureRateLimiter, W13).
type Limiter struct {
	base, max time.Duration
	failures  map[string]int
}

// NewLimiter returns a limiter whose delays start at base and stop
// growing at max.
func NewLimiter(base, max time.Duration) *Limiter {
	return &Limiter{base: base, max: max, failures: map[string]int{}}
}

// When records a failure and returns base·2^(failures before it),
// computed in float64 as client-go does, so that a count large enough to
// overflow an int64 gives max.
func (l *Limiter) When(item string) time.Duration {
	n := l.failures[item]
	l.failures[item] = n + 1
	backoff := float64(l.base.Nanoseconds()) * math.Pow(2, float64(n))
	if backoff > math.MaxInt64 {
		return l.max
	}
	return min(time.Duration(backoff), l.max)
}

// Forget stops counting item's failures.
func (l *Limiter) Forget(item string) { delete(l.failures, item) }

// NumRequeues is how many failures of item are recorded.
func (l *Limiter) NumRequeues(item string) int { return l.failures[item] }

// ProcessNextWorkItem is one turn of a worker: sample-controller's
// processNextWorkItem, with controller-runtime's reconcileHandler rules
// for the result (K2-K5).
func ProcessNextWorkItem(ctx context.Context, q model.Queue, reconcile model.ReconcileFunc) bool {
	key, shutdown := q.Get()
	if shutdown {
		return false
	}
	defer q.Done(key) // whatever happens: a key never Done is never handed out again
	res, err := reconcile(ctx, key)
	switch {
	case err != nil:
		q.AddRateLimited(key) // the error wins: a RequeueAfter is dropped
	case res.RequeueAfter > 0:
		q.Forget(key)
		q.AddAfter(key, res.RequeueAfter)
	default:
		q.Forget(key)
	}
	return true
}
