package synctrack_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cachelab/cachelab/internal/difftest"
)

// client-go: synctrack/lazy.go Get, Notify (L1): the first Get
// evaluates, later Gets are answered from what it kept, and Notify makes
// the next Get evaluate again.
func TestLazyKeepsUntilNotify(t *testing.T) {
	same(t, func(t *testing.T, z lazy) []string {
		e := newEvaluations(100)
		z.setEvaluate(e.evaluate)
		var out []string
		for _, step := range []string{"get", "get", "notify", "notify", "get", "get"} {
			if step == "notify" {
				z.notify()
				out = append(out, "notify")
				continue
			}
			v := result(z.get())
			out = append(out, fmt.Sprintf("get %s (evaluations %d)", v, e.count()))
		}
		return out
	},
		"get 101 (evaluations 1)", "get 101 (evaluations 1)", "notify", "notify",
		"get 102 (evaluations 2)", "get 102 (evaluations 2)")
}

// client-go: synctrack/lazy.go cacheEntry.get (L4): an error is returned
// and not kept: every Get evaluates again until one succeeds, with no
// Notify in between; the success is then kept.
func TestLazyErrorsAreNotKept(t *testing.T) {
	same(t, func(t *testing.T, z lazy) []string {
		e := newEvaluations(100)
		z.setEvaluate(e.evaluate)
		e.failNext(2)
		var out []string
		for range 4 {
			out = append(out, fmt.Sprintf("get %s (evaluations %d)", result(z.get()), e.count()))
		}
		return out
	},
		"get error evaluation 1 failed (evaluations 1)", "get error evaluation 2 failed (evaluations 2)",
		"get 103 (evaluations 3)", "get 103 (evaluations 3)")
}

// client-go: synctrack/lazy.go newCacheEntry (L5): a generation takes the
// Evaluate set when it starts. A new Evaluate is used after the next
// Notify, not before, even when the current generation has kept nothing
// (its evaluations failed) and so evaluates again. The zero Lazy starts
// its first generation at the first Get.
func TestLazyEvaluateIsTakenAtNotify(t *testing.T) {
	same(t, func(t *testing.T, z lazy) []string {
		first, second := newEvaluations(100), newEvaluations(200)
		z.setEvaluate(first.evaluate)
		first.failNext(1)
		out := []string{"get " + result(z.get())}
		z.setEvaluate(second.evaluate)
		out = append(out, "set a new Evaluate", "get "+result(z.get()), "get "+result(z.get()))
		z.notify()
		out = append(out, "notify", "get "+result(z.get()))
		return append(out, fmt.Sprintf("evaluations: first %d, second %d", first.count(), second.count()))
	},
		"get error evaluation 1 failed", "set a new Evaluate", "get 102", "get 102", "notify", "get 201",
		"evaluations: first 2, second 1")
}

// client-go: synctrack/lazy.go Get (L5): Get with no Evaluate set
// panics (a nil function is called), on both sides alike.
func TestLazyWithoutEvaluatePanics(t *testing.T) {
	same(t, func(t *testing.T, z lazy) []string {
		return []string{"get panics: " + difftest.CatchPanic(func() { _, _ = z.get() })}
	}, "get panics: runtime error: invalid memory address or nil pointer dereference")
}

// client-go: synctrack/lazy.go (L1, L4, L5): 300 seeded scripts of
// Get, Notify, failing evaluations and a changed Evaluate, told to both
// sides one step at a time; every Get's result and the number of
// evaluations so far are compared.
func TestLazySeededScripts(t *testing.T) {
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 51))
		steps := make([]int, 40)
		for i := range steps {
			steps[i] = r.IntN(4)
		}
		cl, cg := playSteps(cachelabLazy(), steps), playSteps(clientGoLazy(), steps)
		if d := cmp.Diff(cg, cl); d != "" {
			t.Fatalf("seed %d: cachelab and client-go differ (-client-go +cachelab):\n%s", seed, d)
		}
	}
}

// playSteps plays steps (0, 1: Get; 2: Notify; 3: the next evaluation
// fails, and every third time also a new Evaluate) and returns the
// transcript.
func playSteps(z lazy, steps []int) []string {
	evals := []*evaluations{newEvaluations(0)}
	z.setEvaluate(evals[0].evaluate)
	var out []string
	for i, s := range steps {
		e := evals[len(evals)-1]
		switch s {
		case 0, 1:
			v := result(z.get())
			out = append(out, fmt.Sprintf("%d get %s", i, v))
		case 2:
			z.notify()
		case 3:
			e.failNext(1)
			if i%3 == 0 {
				next := newEvaluations(1000 * len(evals))
				evals = append(evals, next)
				z.setEvaluate(next.evaluate)
			}
		}
	}
	for i, e := range evals {
		out = append(out, fmt.Sprintf("Evaluate %d called %d times", i, e.count()))
	}
	return out
}
