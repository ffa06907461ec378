package exercise

import (
	"math/rand/v2"
	"time"

	"k8s.io/client-go/util/workqueue"

	"github.com/cachelab/cachelab/notebooks/08-reconcile/exercise/model"
	"github.com/cachelab/cachelab/notebooks/internal/lab"
)

// Impl is a solution to check: yours (Yours) or the reference.
type Impl struct {
	// NewLimiter makes a per-item exponential limiter from base to max.
	NewLimiter func(base, max time.Duration) workqueue.TypedRateLimiter[string]
	// ProcessNextWorkItem is one turn of a worker.
	ProcessNextWorkItem LoopFunc
	// Wire gets two controllers' informers from the factory.
	Wire model.WireFunc
}

// Yours is the code in loop.go.
func Yours() Impl {
	return Impl{
		NewLimiter:          func(base, max time.Duration) workqueue.TypedRateLimiter[string] { return NewLimiter(base, max) },
		ProcessNextWorkItem: ProcessNextWorkItem,
		Wire:                Wire,
	}
}

// Checks are the behaviours the lab checks. The limiter's run the same
// calls on client-go's TypedItemExponentialFailureRateLimiter and on
// impl's, and compare every value returned; the loop's play the same
// story (keys queued, what each reconcile returns, or that it panics) to
// client-go's loop and to impl's, each on a client-go rate-limiting queue
// of its own, and compare every call each makes on its queue, in
// client-go's order, how the turn ends (its return value, or the
// reconcile's panic going on), and the queue's state after each turn.
// The wiring's run impl's Wire and client-go's factory over one etcd and
// compare the requests, the informers handed out, and their caches
// (wireChecks).
func Checks(impl Impl) []lab.Check {
	limiter := func(base, max time.Duration, calls ...limiterCall) func() error {
		return func() error { return sameLimiter(impl, base, max, calls) }
	}
	loop := func(turns ...turn) func() error {
		return func() error { return sameLoop(impl.ProcessNextWorkItem, turns) }
	}
	const ms = time.Millisecond
	checks := []lab.Check{
		{ID: "W13", Behaviour: "5ms, 10ms, 20ms, ...: the first 18 failures", Run: limiter(5*ms, 1000*time.Second,
			repeat(18, when("web"), num("web"))...)},
		{ID: "W13", Behaviour: "max, and max past an int64: failures 19-100", Run: limiter(5*ms, 1000*time.Second,
			repeat(100, when("web"))...)},
		{ID: "W13", Behaviour: "Forget: the next failure waits base again", Run: limiter(5*ms, time.Second,
			when("web"), when("web"), when("web"), num("web"), forget("web"), num("web"), when("web"),
			num("db"), forget("db"), when("db"), num("db"))},
		{ID: "W13", Behaviour: "each item counts its own: 300 seeded calls", Run: func() error {
			rnd := rand.New(rand.NewPCG(8, 13))
			for range 10 {
				base := time.Duration(1+rnd.IntN(9)) * ms
				max := base * time.Duration(1+rnd.IntN(1<<12))
				if err := sameLimiter(impl, base, max, randomCalls(rnd, 30)); err != nil {
					return err
				}
			}
			return nil
		}},
		{ID: "K2", Behaviour: "a turn: Get, reconcile, Done; drain, then false", Run: loop(
			turn{add: []string{"web", "db"}}, turn{}, turn{add: []string{"web", "cache"}}, turn{shutdown: true})},
		{ID: "K2", Behaviour: "a reconcile panics: Done runs all the same", Run: loop(
			turn{add: []string{"web"}}, turn{add: []string{"web"}, panics: true}, turn{add: []string{"web"}},
			turn{add: []string{"db", "web"}, panics: true}, turn{}, turn{shutdown: true})},
		{ID: "K3", Behaviour: "an error: AddRateLimited, 5ms, 10ms, 20ms", Run: loop(
			turn{add: []string{"web"}, err: "boom"}, turn{add: []string{"web"}, err: "boom"},
			turn{add: []string{"web"}, err: "boom"})},
		{ID: "K3", Behaviour: "success: Forget, and the next error waits 5ms", Run: loop(
			turn{add: []string{"web"}, err: "boom"}, turn{add: []string{"web"}, err: "boom"},
			turn{add: []string{"web"}}, turn{add: []string{"web"}, err: "boom"})},
		{ID: "K4", Behaviour: "RequeueAfter, no error: Forget, then AddAfter", Run: loop(
			turn{add: []string{"web"}, err: "boom"}, turn{add: []string{"web"}, after: 2 * time.Second},
			turn{add: []string{"web"}, err: "boom"})},
		{ID: "K5", Behaviour: "RequeueAfter and an error: the error wins", Run: loop(
			turn{add: []string{"web"}, err: "boom", after: time.Hour}, turn{add: []string{"web"}, err: "boom", after: time.Second},
			turn{add: []string{"web"}})},
		{ID: "K2-K5", Behaviour: "120 seeded turns over 3 keys, then shutdown", Run: func() error {
			rnd := rand.New(rand.NewPCG(21, 34))
			for range 4 {
				if err := sameLoop(impl.ProcessNextWorkItem, randomTurns(rnd, 30)); err != nil {
					return err
				}
			}
			return nil
		}},
	}
	return append(checks, wireChecks(impl.Wire)...)
}

func repeat(n int, calls ...limiterCall) []limiterCall {
	var out []limiterCall
	for range n {
		out = append(out, calls...)
	}
	return out
}

// randomCalls is n calls of When (most), Forget and NumRequeues on four
// items.
func randomCalls(rnd *rand.Rand, n int) []limiterCall {
	items := []string{"web", "db", "cache", "queue"}
	ops := []string{"When", "When", "When", "When", "Forget", "NumRequeues"}
	out := make([]limiterCall, n)
	for i := range out {
		out[i] = limiterCall{op: ops[rnd.IntN(len(ops))], item: items[rnd.IntN(len(items))]}
	}
	return out
}

// randomTurns is n turns over three keys, each queueing one or two keys
// and reconciling with a random result (one in eight panics), then a
// shutdown.
func randomTurns(rnd *rand.Rand, n int) []turn {
	keys := []string{"web", "db", "cache"}
	out := make([]turn, 0, n+1)
	for range n {
		t := turn{add: []string{keys[rnd.IntN(3)]}}
		if rnd.IntN(3) == 0 {
			t.add = append(t.add, keys[rnd.IntN(3)])
		}
		switch rnd.IntN(8) {
		case 0, 4:
			t.err = "boom"
		case 1, 5:
			t.after = time.Duration(1+rnd.IntN(10)) * time.Second
		case 2, 6:
			t.err, t.after = "boom", time.Duration(1+rnd.IntN(10))*time.Second
		case 3:
			t.panics = true
		}
		out = append(out, t)
	}
	return append(out, turn{shutdown: true})
}
