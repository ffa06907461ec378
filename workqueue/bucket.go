package workqueue

import (
	"math"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// BucketOptions configure a token bucket.
type BucketOptions struct {
	// QPS is how many tokens the bucket gains per second. math.MaxFloat64
	// (golang.org/x/time/rate's Inf) means no limit at all; zero or less
	// means the bucket never refills.
	QPS float64
	// Burst is the bucket's size; it starts full.
	Burst int
	// Clock tells the time; nil means the real clock.
	Clock clock.PassiveClock
}

// BucketRateLimiter is one token bucket shared by all items (W18): every
// When takes a token, the bucket refills at QPS, and a When that finds it
// empty waits until its token will have been earned. It counts no
// failures: NumRequeues is always 0 and Forget does nothing.
//
//	Burst 2, QPS 1:  When→0s  When→0s  When→1s  When→2s  (tokens go to −2)
//
// client-go: util/workqueue/default_rate_limiters.go TypedBucketRateLimiter,
// which wraps golang.org/x/time/rate's Limiter and calls Reserve().Delay().
// This is the same arithmetic written out, with the clock as a parameter:
// rate's Limiter reads time.Now itself, twice per When (once to reserve,
// once to measure the delay), and so does this one.
type BucketRateLimiter[T comparable] struct {
	clock clock.PassiveClock
	qps   float64
	burst int

	mu     sync.Mutex
	tokens float64   // may be negative: tokens promised to waiting items
	last   time.Time // when tokens was last brought up to date
}

// NewBucketRateLimiter returns a full bucket.
func NewBucketRateLimiter[T comparable](opts BucketOptions) *BucketRateLimiter[T] {
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	return &BucketRateLimiter[T]{clock: opts.Clock, qps: opts.QPS, burst: opts.Burst, tokens: float64(opts.Burst)}
}

// When takes a token and returns how long until it is earned.
func (r *BucketRateLimiter[T]) When(T) time.Duration {
	actAt, ok := r.reserve(r.clock.Now())
	if !ok {
		return time.Duration(math.MaxInt64) // a bucket of size 0 never grants a token
	}
	return max(actAt.Sub(r.clock.Now()), 0)
}

// reserve takes one token at time now and returns when it is earned; ok is
// false (and nothing is taken) if the bucket is smaller than one token.
func (r *BucketRateLimiter[T]) reserve(now time.Time) (actAt time.Time, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.qps == math.MaxFloat64 {
		return now, true
	}
	tokens := r.refilled(now) - 1
	var wait time.Duration
	if tokens < 0 {
		wait = r.timeToEarn(-tokens)
	}
	if r.burst < 1 {
		return time.Time{}, false
	}
	r.last, r.tokens = now, tokens
	return now.Add(wait), true
}

// refilled is the token count at time now: what was left at last plus
// what was earned since, up to the bucket's size. A clock that went back
// earns nothing.
func (r *BucketRateLimiter[T]) refilled(now time.Time) float64 {
	since := r.last
	if now.Before(since) {
		since = now
	}
	earned := 0.0
	if r.qps > 0 {
		earned = now.Sub(since).Seconds() * r.qps
	}
	return min(r.tokens+earned, float64(r.burst))
}

// timeToEarn is how long the bucket takes to earn n tokens.
func (r *BucketRateLimiter[T]) timeToEarn(n float64) time.Duration {
	if r.qps <= 0 {
		return time.Duration(math.MaxInt64)
	}
	d := n / r.qps * float64(time.Second)
	if d > float64(math.MaxInt64) {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(d)
}

// NumRequeues is always 0: a bucket does not count items.
func (r *BucketRateLimiter[T]) NumRequeues(T) int { return 0 }

// Forget does nothing: a bucket does not count items.
func (r *BucketRateLimiter[T]) Forget(T) {}
