package workqueue_test

import (
	"fmt"
	"testing"
	"time"
)

// client-go: rate_limiting_queue.go AddRateLimited, Forget, NumRequeues (W12)
func TestRateLimitingQueue(t *testing.T) {
	exp := expo(5*ms, time.Minute)
	runScripts(t, []script{{
		name: "a failing item backs off 5ms, 10ms, 20ms until forgotten", covers: "W12 W13",
		kind: rateLimitingKind, lim: &exp,
		ops: []op{limited("a"), step(5 * ms), get(1), limited("a"), done(1), step(9 * ms), length(), step(ms), get(1),
			requeues("a"), forget("a"), requeues("a"), done(1), limited("a"), step(5 * ms), length()},
		want: []string{
			"limited a",
			"step 5ms",
			"get w1",
			"  w1: got a",
			"limited a",
			"done w1",
			"step 9ms",
			"len → 0",
			"step 1ms",
			"get w1",
			"  w1: got a",
			"requeues a → 2",
			"forget a",
			"requeues a → 0",
			"done w1",
			"limited a",
			"step 5ms",
			"len → 1",
		},
	}, {
		name: "Done does not forget, and Forget does not end processing", covers: "W12",
		kind: rateLimitingKind, lim: &exp,
		ops: []op{limited("a"), limited("a"), requeues("a"), step(5 * ms), get(1), done(1), requeues("a"), forget("a"), get(2), add("a"), length()},
		want: []string{
			"limited a",
			"limited a",
			"requeues a → 2",
			"step 5ms",
			"get w1",
			"  w1: got a",
			"done w1",
			"requeues a → 2",
			"forget a",
			"get w2",
			"add a",
			"  w2: got a",
			"len → 0",
		},
	}, {
		name: "the limiter counts even when the queue is shutting down", covers: "W12 W10",
		kind: rateLimitingKind, lim: &exp,
		ops: []op{shutDown(), limited("a"), limited("a"), requeues("a"), length()},
		want: []string{
			"down",
			"limited a",
			"limited a",
			"requeues a → 2",
			"len → 0",
		},
	}, {
		name: "the default limiter: items back off alone until the bucket runs dry", covers: "W12 W17",
		kind: rateLimitingKind,
		ops: []op{limited("a"), limited("a"), limited("a"), requeues("a"), step(5 * ms), length(), step(15 * ms), length(),
			forget("a"), requeues("a")},
		want: []string{
			"limited a",
			"limited a",
			"limited a",
			"requeues a → 3",
			"step 5ms",
			"len → 1",
			"step 15ms",
			"len → 1",
			"forget a",
			"requeues a → 0",
		},
	}})
}

// A hundred and one failures in a row, each of a new item, through
// client-go's default limiter: the bucket's burst of 100 is spent, and
// the 101st waits 100ms.
func TestRateLimitingQueueBucket(t *testing.T) {
	var ops []op
	for i := range 101 {
		ops = append(ops, limited(fmt.Sprintf("i%03d", i)))
	}
	ops = append(ops, step(5*ms), length(), step(95*ms-1), length(), step(1), length())
	runScripts(t, []script{{name: "burst of 100", covers: "W17 W18", kind: rateLimitingKind, ops: ops}})
}
