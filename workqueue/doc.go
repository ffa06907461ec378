// Package workqueue is the queue between an informer's event handlers and
// a controller's workers: it turns "something happened to x" into "x
// needs reconciling", once, by one worker at a time, with a backoff when
// reconciling x fails.
//
// # The problem
//
// A handler hears every Add, Update and Delete, often many for one object
// in a burst. A controller does not want to reconcile once per event; it
// wants to reconcile each key once it has settled, from the cache
// (level-triggered), on a handful of worker goroutines, never on two at
// once for the same key, and to retry failures without spinning.
//
// # Queue: the dirty and processing sets
//
// Every item is in one of four states, kept as two bits (W1, W2):
//
//	              Add                 Get                Done
//	  (absent) ───────► dirty ─────────────► processing ──────► (absent)
//	                    (queued)                 │  ▲
//	                                         Add │  │ Done: queued again, at the back
//	                                             ▼  │
//	                                      processing+dirty
//
//	Add(a) Add(b) Add(a)         queue: [a b]         (the second a coalesces)
//	Get → a   Add(a)             queue: [b]           a is dirty, but held: not queued
//	Get → b   Done(a)            queue: [a]           now a is queued again
//
// Its rules:
//
//   - W1: an item is queued at most once; items come out first in, first out.
//   - W2: an item a worker holds is never queued; added again meanwhile,
//     it is queued by Done. So no two workers hold the same item, as long
//     as every Get is followed by exactly one Done.
//   - W3: ShutDown ignores new items; Get drains what is queued, then
//     reports shutdown.
//   - W4: Done trusts its caller: a Done without a Get can queue an item
//     twice, and break W2.
//   - W5: waiting workers are served longest-waiting first (a sync.Cond).
//   - W6: ShutDownWithDrain also waits until no worker holds an item.
//
// # DelayingQueue: AddAfter on a clock
//
// AddAfter(x, d) keeps x outside the queue until the clock reaches now+d
// (W7). The waiting items form a min-heap on their due time; a goroutine
// sleeps on a timer for the earliest and, when it fires, Flush adds every
// item due, earliest first (W8). An item waits at most once: a second
// AddAfter can bring it forward, never push it back (W9). Shutting down
// drops whatever still waits (W10).
//
//	t=0  AddAfter(a, 3s) AddAfter(b, 1s) AddAfter(a, 2s)   waiting: b@1s a@2s
//	t=1s Flush → Add(b)                                      waiting: a@2s
//	t=5s Flush → Add(a)                                      waiting: (none)
//
// The heap and its ordering are a core that starts nothing and never reads
// a clock (waiting.go); Flush is one step of the loop, callable directly.
// With Options.Manual there is no goroutine at all: the caller moves the
// clock and calls Flush, as a simulator stepping one thing at a time does.
//
// # RateLimitingQueue and the rate limiters
//
// AddRateLimited(x) is AddAfter(x, limiter.When(x)) (W12). When counts a
// failure of x and says how long to wait; Forget clears x's count (after
// success, or when giving up); nothing is forgotten by itself, not even by
// Done. The limiters:
//
//	ItemExponentialFailureRateLimiter  base·2^failures, capped        (W13)
//	ItemFastSlowRateLimiter            fast n times, then slow        (W14)
//	MaxOfRateLimiter                   the longest of several         (W15)
//	WithMaxWaitRateLimiter             another one, capped            (W16)
//	BucketRateLimiter                  one token bucket for all items (W18)
//	DefaultControllerRateLimiter       max of exponential 5ms..1000s and
//	                                   a bucket of 10/s, burst 100    (W17)
//
// # Mirrors client-go
//
// util/workqueue in k8s.io/client-go v0.37.2: queue.go (Typed),
// delaying_queue.go, rate_limiting_queue.go, default_rate_limiters.go.
// Every rule above is checked against it by differential tests and
// fuzzers (REFERENCE.md, W1–W18).
//
// Differences in shape, none in behaviour the tests can see:
//   - only typed queues and limiters, so "Typed" is dropped from the
//     names; one constructor each (New, NewDelaying, NewRateLimiting),
//     with an Options struct;
//   - one map of state bits instead of two sets; a FIFO that reuses its
//     consumed front;
//   - AddAfter puts the item into the heap itself and nudges the loop
//     (only when the item is now the earliest), where client-go sends it
//     to the loop over a channel of 1000, so that there AddAfter blocks
//     while the loop is 1000 items behind, and here it never does (the
//     one difference a caller could see, and only under that load); the
//     loop has no 10-second heartbeat (it only repeated what the timer
//     does);
//     ShutDownWithDrain ends the loop at once, where client-go's lingers
//     until its next wake-up (it can do nothing by then);
//   - the token bucket is written out instead of wrapping
//     golang.org/x/time/rate, with the same arithmetic, and takes its
//     clock as a parameter (rate reads time.Now);
//   - Flush, Waiting and Options.Manual exist only here;
//   - not here (yet): metrics (client-go's MetricsProvider, queue names),
//     a custom inner queue (TypedQueueConfig.Queue and its Touch hook),
//     and ParallelizeUntil.
package workqueue
