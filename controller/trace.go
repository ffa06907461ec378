package controller

import (
	"fmt"
	"time"

	"github.com/cachelab/cachelab/workqueue"
)

// Kind names one step of the controller loop. The set is closed.
type Kind string

// The steps, by the component that takes them.
const (
	// Enqueue: the handler queued Key; Detail is the event (add, update,
	// delete, tombstone).
	Enqueue Kind = "enqueue"
	// Unkeyable: the handler got an object it could not key and dropped
	// it; Detail is the event.
	Unkeyable Kind = "unkeyable"
	// Get: a worker took Key from the queue.
	Get Kind = "get"
	// Stale: the guard held Key back; Detail compares the versions.
	Stale Kind = "stale"
	// Reconciled: the reconcile of Key returned Result and Err.
	Reconciled Kind = "returned"
	// RateLimited: AddRateLimited asked the limiter, which said Delay.
	RateLimited Kind = "requeue-rate-limited"
	// AddAfter: Key is requeued after Delay, as the reconcile asked.
	AddAfter Kind = "add-after"
	// Forget: the limiter forgot Key's failures.
	Forget Kind = "forget"
	// Done: the worker released Key.
	Done Kind = "done"
)

// Event is one step of the loop.
type Event struct {
	Kind   Kind
	Key    string
	Delay  time.Duration // RateLimited, AddAfter
	Detail string
	Result Result // Reconciled
	Err    error  // Reconciled
}

// component is the trace layer the step belongs to.
func (k Kind) component() string {
	switch k {
	case Enqueue, Unkeyable:
		return "handler"
	case Stale, Reconciled:
		return "reconcile"
	}
	return "workqueue"
}

// String prints the event on one line: component, kind, key, then the
// delay or the detail.
func (e Event) String() string {
	s := fmt.Sprintf("%s: %s %s", e.Kind.component(), e.Kind, e.Key)
	if e.Delay != 0 || e.Kind == RateLimited || e.Kind == AddAfter {
		s += fmt.Sprintf(" %v", e.Delay)
	}
	if e.Detail != "" {
		s += " " + e.Detail
	}
	if e.Kind == Reconciled {
		s += " " + describeOutcome(e.Result, e.Err)
	}
	return s
}

// tracedLimiter tells the trace each delay its limiter hands out, so the
// trace shows the backoff an AddRateLimited chose.
type tracedLimiter struct {
	workqueue.RateLimiter[string]
	trace func(Event)
}

func (l tracedLimiter) When(key string) time.Duration {
	d := l.RateLimiter.When(key)
	l.trace(Event{Kind: RateLimited, Key: key, Delay: d})
	return d
}

// describeOutcome says what a reconcile returned, in trace words.
func describeOutcome(res Result, err error) string {
	s := "ok"
	switch {
	case err != nil && res.RequeueAfter > 0:
		s = fmt.Sprintf("error %q (requeue-after %v ignored)", err, res.RequeueAfter)
	case err != nil:
		s = fmt.Sprintf("error %q", err)
	case res.RequeueAfter > 0:
		s = fmt.Sprintf("requeue-after %v", res.RequeueAfter)
	}
	if res.Wrote != "" {
		s += " wrote@" + res.Wrote
	}
	return s
}
