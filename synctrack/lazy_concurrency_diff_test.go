package synctrack_test

import (
	"fmt"
	"testing"
)

// Stories with goroutines. Each step that must happen while an
// evaluation is in progress happens while Evaluate is blocked (it tells
// `started`, then waits for release), and each Get that must wait for an
// evaluation is seen parked on the generation's lock before the
// evaluation is released: every interleaving is forced, none is left to
// the scheduler, and nothing sleeps.

// client-go: synctrack/lazy.go Notify, Get (L2): Notify during an
// evaluation. A Get after the Notify does not wait for the evaluation in
// progress: it evaluates in the new generation. The old evaluation, when
// it ends, answers only the Get that started it, and is not kept: later
// Gets get the new generation's value without evaluating.
func TestLazyNotifyDuringEvaluate(t *testing.T) {
	same(t, func(t *testing.T, z lazy) []string {
		e := newEvaluations(100)
		z.setEvaluate(e.evaluate)
		release := e.hold()
		first := goGet(z)
		out := []string{fmt.Sprint("evaluation ", <-e.started, " started and blocks")}
		z.notify()
		out = append(out, "notify", "a Get after Notify: "+getNow(t, z))
		release()
		out = append(out, "the Get from before Notify: "+first.wait())
		out = append(out, "a later Get: "+result(z.get()), fmt.Sprint("evaluations: ", e.count()))
		return out
	},
		"evaluation 1 started and blocks", "notify", "a Get after Notify: 102",
		"the Get from before Notify: 101", "a later Get: 102", "evaluations: 2")
}

// client-go: synctrack/lazy.go cacheEntry.get (L3): Gets that arrive
// while the generation evaluates wait for that evaluation and share its
// value: Evaluate runs once for three Gets.
func TestLazyGetsShareOneEvaluation(t *testing.T) {
	same(t, func(t *testing.T, z lazy) []string {
		e := newEvaluations(100)
		z.setEvaluate(e.evaluate)
		release := e.hold()
		first := goGet(z)
		out := []string{fmt.Sprint("evaluation ", <-e.started, " started and blocks")}
		second, third := goGet(z), goGet(z)
		waitForLock(t, second)
		waitForLock(t, third)
		out = append(out, "two more Gets wait for it")
		release()
		out = append(out, "first: "+first.wait(), "second: "+second.wait(), "third: "+third.wait())
		return append(out, fmt.Sprint("evaluations: ", e.count()))
	},
		"evaluation 1 started and blocks", "two more Gets wait for it",
		"first: 101", "second: 101", "third: 101", "evaluations: 1")
}

// client-go: synctrack/lazy.go cacheEntry.get (L4): an evaluation fails
// while another Get waits for it. The failure answers only the Get that
// evaluated; the waiting Get, finding nothing kept, evaluates again
// itself, and its success is kept.
func TestLazyWaiterRetriesAfterError(t *testing.T) {
	same(t, func(t *testing.T, z lazy) []string {
		e := newEvaluations(100)
		z.setEvaluate(e.evaluate)
		e.failNext(1)
		release := e.hold()
		first := goGet(z)
		out := []string{fmt.Sprint("evaluation ", <-e.started, " started, will fail")}
		second := goGet(z)
		waitForLock(t, second)
		out = append(out, "a second Get waits for it")
		release()
		out = append(out, "first: "+first.wait(), "second: "+second.wait())
		out = append(out, "a later Get: "+result(z.get()), fmt.Sprint("evaluations: ", e.count()))
		return out
	},
		"evaluation 1 started, will fail", "a second Get waits for it",
		"first: error evaluation 1 failed", "second: 102", "a later Get: 102", "evaluations: 2")
}

// client-go: synctrack/lazy.go Notify, cacheEntry.get (L2, L3): a Get
// that was already waiting for the old generation when Notify came stays
// with it: it gets the old evaluation's value, while a Get after the
// Notify evaluates anew. (client-go's TestLazySlowEval tells a story
// like it, with its own sequencing.)
func TestLazyWaiterStaysWithItsGeneration(t *testing.T) {
	same(t, func(t *testing.T, z lazy) []string {
		e := newEvaluations(100)
		z.setEvaluate(e.evaluate)
		release := e.hold()
		first := goGet(z)
		out := []string{fmt.Sprint("evaluation ", <-e.started, " started and blocks")}
		waiting := goGet(z)
		waitForLock(t, waiting)
		z.notify()
		out = append(out, "a Get waits for it; notify", "a Get after Notify: "+getNow(t, z))
		release()
		out = append(out, "first: "+first.wait(), "the waiting Get: "+waiting.wait())
		return append(out, "a later Get: "+result(z.get()), fmt.Sprint("evaluations: ", e.count()))
	},
		"evaluation 1 started and blocks", "a Get waits for it; notify", "a Get after Notify: 102",
		"first: 101", "the waiting Get: 101", "a later Get: 102", "evaluations: 2")
}

// client-go: synctrack/lazy.go Notify (L2): a Notify during the
// evaluation of a Get after an earlier Notify: each generation evaluates
// once, and the newest answers every Get that starts after its Notify,
// however the evaluations finish.
func TestLazyTwoNotifiesDuringEvaluations(t *testing.T) {
	same(t, func(t *testing.T, z lazy) []string {
		e := newEvaluations(100)
		z.setEvaluate(e.evaluate)
		releaseFirst := e.hold()
		first := goGet(z)
		out := []string{fmt.Sprint("evaluation ", <-e.started, " blocks")}
		z.notify()
		releaseSecond := e.hold()
		second := goGet(z)
		out = append(out, "notify; "+startedBy(t, e, second))
		z.notify()
		out = append(out, "notify; a Get: "+getNow(t, z))
		releaseSecond()
		releaseFirst()
		out = append(out, "second: "+second.wait(), "first: "+first.wait())
		return append(out, "a later Get: "+result(z.get()), fmt.Sprint("evaluations: ", e.count()))
	},
		"evaluation 1 blocks", "notify; evaluation 2 blocks", "notify; a Get: 103",
		"second: 102", "first: 101", "a later Get: 103", "evaluations: 3")
}
