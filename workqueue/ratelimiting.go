package workqueue

// RateLimitingQueue is a DelayingQueue that asks a RateLimiter how long an
// item must wait before it is retried.
//
//	AddRateLimited(x) = AddAfter(x, limiter.When(x))
//	Forget(x)         = limiter.Forget(x)
//	NumRequeues(x)    = limiter.NumRequeues(x)
//
// The queue itself counts nothing: forgetting is the worker's job, after
// success or when it gives up (W12).
//
// client-go: util/workqueue/rate_limiting_queue.go rateLimitingType.
type RateLimitingQueue[T comparable] struct {
	*DelayingQueue[T]
	limiter RateLimiter[T]
}

// NewRateLimiting returns an empty rate-limiting queue over limiter.
func NewRateLimiting[T comparable](limiter RateLimiter[T], opts Options) *RateLimitingQueue[T] {
	return &RateLimitingQueue[T]{DelayingQueue: NewDelaying[T](opts), limiter: limiter}
}

// AddRateLimited adds item after the delay the limiter gives it. The
// limiter is asked even when the queue is shutting down and the item is
// then dropped, so its count still grows (W12).
func (q *RateLimitingQueue[T]) AddRateLimited(item T) {
	q.AddAfter(item, q.limiter.When(item))
}

// Forget tells the limiter to stop tracking item. It does not replace
// Done.
func (q *RateLimitingQueue[T]) Forget(item T) { q.limiter.Forget(item) }

// NumRequeues is the limiter's count for item.
func (q *RateLimitingQueue[T]) NumRequeues(item T) int { return q.limiter.NumRequeues(item) }
