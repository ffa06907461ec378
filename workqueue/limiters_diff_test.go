package workqueue_test

import (
	"math"
	"testing"
	"time"
)

// client-go: default_rate_limiters.go TypedItemExponentialFailureRateLimiter (W13)
func TestExponentialLimiter(t *testing.T) {
	runLimiters(t, []limCase{{
		name: "doubles from base per item, capped, and Forget starts afresh", covers: "W13",
		spec: expo(5*ms, 100*ms),
		ops:  []limOp{when("a", 6), when("b", 1), requeuesL("a"), forgetL("a"), requeuesL("a"), when("a", 2)},
		want: []string{
			"when a: 5ms 10ms 20ms 40ms 80ms 100ms",
			"when b: 5ms",
			"requeues a = 6",
			"forget a",
			"requeues a = 0",
			"when a: 5ms 10ms",
		},
	}, {
		// No want: the 64th delay is whatever the platform makes of
		// converting 2^63 to an int64 (math.MinInt64 on amd64); the
		// differential comparison is the proof.
		name: "the float64 edge: base·2^n of exactly 2^63 is not capped", covers: "W13",
		spec: expo(1, time.Hour),
		ops:  []limOp{when("a", 65)},
	}, {
		name: "past 2^63 the cap holds", covers: "W13",
		spec: expo(3, time.Duration(math.MaxInt64)),
		ops:  []limOp{when("a", 64)},
	}})
}

// client-go: default_rate_limiters.go TypedItemFastSlowRateLimiter (W14)
func TestFastSlowLimiter(t *testing.T) {
	runLimiters(t, []limCase{{
		name: "fast for the first attempts, then slow", covers: "W14",
		spec: fastSlow(ms, s, 3),
		ops:  []limOp{when("a", 5), when("b", 1), requeuesL("a"), forgetL("a"), when("a", 1)},
		want: []string{
			"when a: 1ms 1ms 1ms 1s 1s",
			"when b: 1ms",
			"requeues a = 5",
			"forget a",
			"when a: 1ms",
		},
	}, {
		name: "no fast attempts at all", covers: "W14",
		spec: fastSlow(ms, s, 0),
		ops:  []limOp{when("a", 2)},
		want: []string{
			"when a: 1s 1s",
		},
	}})
}

// client-go: default_rate_limiters.go TypedMaxOfRateLimiter, TypedWithMaxWaitRateLimiter (W15, W16)
func TestCombinedLimiters(t *testing.T) {
	runLimiters(t, []limCase{{
		name: "max-of: the worst delay, the largest count, and Forget for all", covers: "W15",
		spec: maxOf(fastSlow(ms, s, 2), expo(10*ms, time.Hour)),
		ops:  []limOp{when("a", 8), requeuesL("a"), forgetL("a"), requeuesL("a"), when("a", 1)},
		want: []string{
			"when a: 10ms 20ms 1s 1s 1s 1s 1s 1.28s",
			"requeues a = 8",
			"forget a",
			"requeues a = 0",
			"when a: 10ms",
		},
	}, {
		name: "max-of nothing waits 0", covers: "W15",
		spec: maxOf(),
		ops:  []limOp{when("a", 2), requeuesL("a")},
		want: []string{
			"when a: 0s 0s",
			"requeues a = 0",
		},
	}, {
		name: "with-max-wait caps the inner delay, keeps its count", covers: "W16",
		spec: maxWait(expo(ms, time.Hour), 10*ms),
		ops:  []limOp{when("a", 6), requeuesL("a"), forgetL("a"), when("a", 1)},
		want: []string{
			"when a: 1ms 2ms 4ms 8ms 10ms 10ms",
			"requeues a = 6",
			"forget a",
			"when a: 1ms",
		},
	}})
}

// client-go: default_rate_limiters.go TypedBucketRateLimiter over
// golang.org/x/time/rate Limiter.Reserve().Delay() (W18)
func TestBucketLimiter(t *testing.T) {
	runLimiters(t, []limCase{{
		name: "a full bucket, then one token per 1/qps, shared by all items", covers: "W18",
		spec: bucket(2, 3),
		ops:  []limOp{when("a", 3), when("b", 2), wait(700 * ms), when("c", 2), requeuesL("a"), forgetL("a"), when("a", 1)},
		want: []string{
			"when a: 0s 0s 0s",
			"when b: 500ms 1s",
			"wait 700ms",
			"when c: 800ms 1.3s",
			"requeues a = 0",
			"forget a",
			"when a: 1.8s",
		},
	}, {
		name: "time refills the bucket up to its size, no further", covers: "W18",
		spec: bucket(10, 2),
		ops:  []limOp{when("a", 4), wait(time.Hour), when("a", 4)},
		want: []string{
			"when a: 0s 0s 100ms 200ms",
			"wait 1h0m0s",
			"when a: 0s 0s 100ms 200ms",
		},
	}, {
		name: "a bucket of size 0 never grants", covers: "W18",
		spec: bucket(10, 0),
		ops:  []limOp{when("a", 2)},
		want: []string{
			"when a: 2562047h47m16.854775807s 2562047h47m16.854775807s",
		},
	}, {
		name: "an infinite rate never waits", covers: "W18",
		spec: bucket(math.MaxFloat64, 0),
		ops:  []limOp{when("a", 3)},
		want: []string{
			"when a: 0s 0s 0s",
		},
	}, {
		name: "a rate of 0 grants the burst, then never", covers: "W18",
		spec: bucket(0, 2),
		ops:  []limOp{when("a", 3), wait(time.Hour), when("a", 1)},
		want: []string{
			"when a: 0s 0s 2562047h47m16.854775807s",
			"wait 1h0m0s",
			"when a: 2562047h47m16.854775807s",
		},
	}, {
		name: "a rate that does not divide a second", covers: "W18",
		spec: bucket(3, 1),
		ops:  []limOp{when("a", 4), wait(333 * ms), when("a", 2)},
		want: []string{
			"when a: 0s 333.333333ms 666.666666ms 1s",
			"wait 333ms",
			"when a: 1.000333333s 1.333666666s",
		},
	}})
}

// client-go: default_rate_limiters.go DefaultTypedControllerRateLimiter (W17)
func TestDefaultControllerLimiter(t *testing.T) {
	runLimiters(t, []limCase{{
		name: "5ms doubling per item until the bucket's burst of 100 is spent, then 100ms apart", covers: "W17",
		spec: defaultLimiter(),
		ops:  []limOp{when("a", 4), when("b", 90), when("c", 8), wait(s), when("d", 2), requeuesL("a"), forgetL("a"), when("a", 1)},
	}})
}
