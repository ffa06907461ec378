package workqueue

import (
	"math"
	"sync"
	"time"
)

// RateLimiter decides how long an item waits before it is retried.
//
// client-go: util/workqueue/default_rate_limiters.go TypedRateLimiter.
// cachelab's limiters are all typed, so the "Typed" in client-go's names
// is dropped.
type RateLimiter[T comparable] interface {
	// When records one more failure of item and returns its delay.
	When(item T) time.Duration
	// Forget stops tracking item: its next When starts afresh.
	Forget(item T)
	// NumRequeues is how many failures are recorded for item.
	NumRequeues(item T) int
}

// DefaultControllerRateLimiter is what controllers use unless they say
// otherwise (W17): the larger of a per-item exponential backoff from 5ms
// to 1000s and an overall token bucket of 10 per second, burst 100. The
// bucket reads the real clock, as client-go's does.
func DefaultControllerRateLimiter[T comparable]() RateLimiter[T] {
	return NewMaxOfRateLimiter(
		NewItemExponentialFailureRateLimiter[T](5*time.Millisecond, 1000*time.Second),
		NewBucketRateLimiter[T](BucketOptions{QPS: 10, Burst: 100}),
	)
}

// DefaultItemBasedRateLimiter is a per-item exponential backoff from 1ms
// to 1000s.
func DefaultItemBasedRateLimiter[T comparable]() RateLimiter[T] {
	return NewItemExponentialFailureRateLimiter[T](time.Millisecond, 1000*time.Second)
}

// failures counts failures per item; the per-item limiters share it.
type failures[T comparable] struct {
	mu sync.Mutex
	n  map[T]int
}

// record adds one failure and returns how many there were before.
func (f *failures[T]) record(item T) (before int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n == nil {
		f.n = map[T]int{}
	}
	before = f.n[item]
	f.n[item] = before + 1
	return before
}

func (f *failures[T]) Forget(item T) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.n, item)
}

func (f *failures[T]) NumRequeues(item T) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n[item]
}

// ItemExponentialFailureRateLimiter waits base·2^n after an item's n-th
// failure since it was last forgotten (counting from 0), capped at max
// (W13).
type ItemExponentialFailureRateLimiter[T comparable] struct {
	failures[T]
	base, max time.Duration
}

// NewItemExponentialFailureRateLimiter returns a limiter that doubles an
// item's delay from base at each failure, up to max.
func NewItemExponentialFailureRateLimiter[T comparable](base, max time.Duration) *ItemExponentialFailureRateLimiter[T] {
	return &ItemExponentialFailureRateLimiter[T]{base: base, max: max}
}

// When records a failure and returns base·2^(failures before it), capped.
func (r *ItemExponentialFailureRateLimiter[T]) When(item T) time.Duration {
	return exponential(r.base, r.max, r.record(item))
}

// exponential is base·2^exp capped at max, computed in float64 as
// client-go computes it, edges included: a product above 2^63 gives max,
// but one of exactly 2^63 (base a power of two) converts to a Duration
// the platform chooses (math.MinInt64 on amd64), which is below max and
// returned (W13).
func exponential(base, max time.Duration, exp int) time.Duration {
	backoff := float64(base.Nanoseconds()) * math.Pow(2, float64(exp))
	if backoff > math.MaxInt64 {
		return max
	}
	return min(time.Duration(backoff), max)
}

// ItemFastSlowRateLimiter waits fast for an item's first maxFast failures,
// then slow (W14).
type ItemFastSlowRateLimiter[T comparable] struct {
	failures[T]
	fast, slow time.Duration
	maxFast    int
}

// NewItemFastSlowRateLimiter returns a limiter that waits fast for the
// first maxFast failures of an item and slow after.
func NewItemFastSlowRateLimiter[T comparable](fast, slow time.Duration, maxFast int) *ItemFastSlowRateLimiter[T] {
	return &ItemFastSlowRateLimiter[T]{fast: fast, slow: slow, maxFast: maxFast}
}

// When records a failure and returns fast or slow.
func (r *ItemFastSlowRateLimiter[T]) When(item T) time.Duration {
	if r.record(item)+1 <= r.maxFast {
		return r.fast
	}
	return r.slow
}

// MaxOfRateLimiter asks every limiter and waits the longest (W15). Every
// limiter records the failure, whichever wins.
type MaxOfRateLimiter[T comparable] struct {
	limiters []RateLimiter[T]
}

// NewMaxOfRateLimiter returns a limiter that is the worst of limiters.
func NewMaxOfRateLimiter[T comparable](limiters ...RateLimiter[T]) *MaxOfRateLimiter[T] {
	return &MaxOfRateLimiter[T]{limiters: limiters}
}

// When asks every limiter, in order, and returns the longest delay, or 0
// if none is positive.
func (r *MaxOfRateLimiter[T]) When(item T) time.Duration {
	var worst time.Duration
	for _, l := range r.limiters {
		worst = max(worst, l.When(item))
	}
	return worst
}

// Forget forgets item in every limiter.
func (r *MaxOfRateLimiter[T]) Forget(item T) {
	for _, l := range r.limiters {
		l.Forget(item)
	}
}

// NumRequeues is the largest count among the limiters, or 0.
func (r *MaxOfRateLimiter[T]) NumRequeues(item T) int {
	var most int
	for _, l := range r.limiters {
		most = max(most, l.NumRequeues(item))
	}
	return most
}

// WithMaxWaitRateLimiter caps another limiter's delay at max (W16).
type WithMaxWaitRateLimiter[T comparable] struct {
	limiter RateLimiter[T]
	max     time.Duration
}

// NewWithMaxWaitRateLimiter returns limiter with its delays capped at max.
func NewWithMaxWaitRateLimiter[T comparable](limiter RateLimiter[T], max time.Duration) *WithMaxWaitRateLimiter[T] {
	return &WithMaxWaitRateLimiter[T]{limiter: limiter, max: max}
}

// When is the inner limiter's delay, at most max.
func (r *WithMaxWaitRateLimiter[T]) When(item T) time.Duration {
	return min(r.limiter.When(item), r.max)
}

// Forget forgets item in the inner limiter.
func (r *WithMaxWaitRateLimiter[T]) Forget(item T) { r.limiter.Forget(item) }

// NumRequeues is the inner limiter's count.
func (r *WithMaxWaitRateLimiter[T]) NumRequeues(item T) int { return r.limiter.NumRequeues(item) }

var (
	_ RateLimiter[string] = (*ItemExponentialFailureRateLimiter[string])(nil)
	_ RateLimiter[string] = (*ItemFastSlowRateLimiter[string])(nil)
	_ RateLimiter[string] = (*MaxOfRateLimiter[string])(nil)
	_ RateLimiter[string] = (*WithMaxWaitRateLimiter[string])(nil)
	_ RateLimiter[string] = (*BucketRateLimiter[string])(nil)
)
