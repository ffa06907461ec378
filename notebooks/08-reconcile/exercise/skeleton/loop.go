// Package skeleton is loop.go and wire.go as a learner gets them, their
// comments aside: TestSkeletonFails runs the lab on them, so that CI
// proves the skeleton fails whatever the learner's files hold, and
// notebooks/internal/lab checks that they are still those files' code.
package skeleton

import (
	"context"
	"time"

	"github.com/cachelab/cachelab/notebooks/08-reconcile/exercise/model"
)

// Result is the model's.
type Result = model.Result

// ReconcileFunc is the model's.
type ReconcileFunc = model.ReconcileFunc

// Queue is the model's.
type Queue = model.Queue

// Limiter is loop.go's, unwritten: it remembers nothing.
type Limiter struct {
	base, max time.Duration
}

// NewLimiter is loop.go's.
func NewLimiter(base, max time.Duration) *Limiter {
	return &Limiter{base: base, max: max}
}

// When is loop.go's, unwritten: no wait.
func (l *Limiter) When(item string) time.Duration {
	return 0
}

// Forget is loop.go's, unwritten: it does nothing.
func (l *Limiter) Forget(item string) {
}

// NumRequeues is loop.go's, unwritten: none.
func (l *Limiter) NumRequeues(item string) int {
	return 0
}

// ProcessNextWorkItem is loop.go's, unwritten: it takes no key.
func ProcessNextWorkItem(ctx context.Context, q Queue, reconcile ReconcileFunc) bool {
	return false
}
