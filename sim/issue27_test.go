package sim

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cachelab/cachelab/informer"
	"github.com/cachelab/cachelab/sim/trace"
)

// runOne parses src and runs it once in the given stack and world,
// failing the test on a divergence; it returns the result and the run's
// error.
func runOne(t *testing.T, name, src string, opts Options) (*Result, error) {
	t.Helper()
	sc, err := Parse(name+".txt", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if opts.Seed == 0 {
		opts.Seed = 1
	}
	res, err := Run(context.Background(), sc, opts)
	if err == nil && res.Divergence != nil {
		t.Fatalf("%s: %v", name, res.Divergence)
	}
	return res, err
}

// Issue 27, case 1: a step finishes whatever the number of keys. A
// controller with one worker over 1,000 new objects reconciles each once
// in the step that created them (the round budget of 200 failed at 201).
func TestControllerStepScalesWithKeys(t *testing.T) {
	for _, tc := range []struct {
		server  string
		stack   informer.Stack
		workers string
		n       string
	}{
		{ServerWatchCache, informer.Default, "1", "1000"},
		{ServerEtcd, informer.Classic, "3", "1000"},
	} {
		t.Run(tc.server+"/"+string(tc.stack), func(t *testing.T) {
			src := script("start-controller workers="+tc.workers, "start", "bulk-create n="+tc.n)
			res, err := runOne(t, "many-keys", src, Options{Server: tc.server, Stack: tc.stack})
			if err != nil {
				t.Fatal(err)
			}
			last := res.Steps[len(res.Steps)-1]
			got := 0
			for _, e := range last.Sides["cachelab"] {
				if e.Layer == "reconcile" {
					got++
				}
			}
			if want := 1000; got != want {
				t.Errorf("reconcile lines in the bulk-create step: %d, want %d", got, want)
			}
		})
	}
}

// Issue 27, case 1, the other half: the "never rests" diagnosis fires only
// for a key that really keeps coming back, and names it.
func TestRestlessKeyIsNamed(t *testing.T) {
	src := script("create ns0/a", "start-controller writes", "start")
	_, err := runOne(t, "restless", src, Options{Server: ServerEtcd, ctlRestless: true})
	if err == nil || !strings.Contains(err.Error(), "reconciled ns0/a 100 times at 0s") {
		t.Fatalf("err = %v, want ns0/a named as never at rest", err)
	}
}

// fullTrace is a run as `cachelab run --impl both --full` prints its steps:
// the world's lines and both sides', step by step.
func fullTrace(res *Result) string {
	var b strings.Builder
	for _, sr := range res.Steps {
		trace.WriteStep(&b, sr, trace.TextStyle{Impl: "both"})
	}
	return b.String()
}

// sameEveryRun runs src n times and fails if any run's trace differs from
// the first's: a trace that depends on the scheduler is a bug, even if
// both sides agree in each run. It returns the first run's result.
func sameEveryRun(t *testing.T, name, src string, opts Options, n int) *Result {
	t.Helper()
	first, err := runOne(t, name, src, opts)
	if err != nil {
		t.Fatal(err)
	}
	want := fullTrace(first)
	for i := 2; i <= n; i++ {
		res, err := runOne(t, name, src, opts)
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		if got := fullTrace(res); got != want {
			t.Fatalf("run %d printed another trace than run 1 (-run 1 +run %d):\n%s", i, i, cmp.Diff(want, got))
		}
	}
	return first
}

// Issue 27, case 4: a retry held until etcd changes goes through once per
// step, after all of the step's writes, on both sides. Let through at
// the first of two deletes, one side's retry met etcd between them and
// the other's after both, and one side showed an extra LIST/WATCH round.
func TestHeldRetryGoesOncePerStep(t *testing.T) {
	src := `# A label-selected informer, a value kube-apiserver cannot decode, and two deletes in one step.
# Server: etcd

create ns0/a ns0/b ns0/c labels=(app=web)
----

put-raw ns1/x garbage
----

add-handler h
----

start labels=(app=web)
----

delete ns0/a ns0/b
----
`
	for _, stack := range []informer.Stack{informer.Default, informer.Classic} {
		t.Run(string(stack), func(t *testing.T) {
			res := sameEveryRun(t, "held-retry", src, Options{Stack: stack}, 3)
			last := res.Steps[len(res.Steps)-1]
			for impl, events := range last.Sides {
				lists := 0
				for _, e := range events {
					if e.Layer == trace.LayerRequest && e.Op == "LIST" {
						lists++
					}
				}
				if lists != 1 {
					t.Errorf("%s: %d LISTs in the step that deleted twice, want 1 (the held retry, once)", impl, lists)
				}
			}
		})
	}
}

// Issue 27, case 5: a kube-apiserver restart ends every watch of the old
// cache, and the informers' immediate re-watches meet the new cache once
// it has listed etcd, on every run: never a 429 on one run and the wait
// for the cache on another (seen in the classic stack after a restore).
func TestRestartAPIServerRewatchMeetsReadyCache(t *testing.T) {
	src := `# etcd restored, time passes, kube-apiserver restarts: the re-watches meet the new cache.
# Server: watchcache

add-handler h1
----

create ns0/a ns0/b
----

start stack=classic
----

etcd-snapshot s1
----

create ns0/c
----

etcd-restore s1
----

advance 10s
----

restart-apiserver
----

advance 5s
----
`
	res := sameEveryRun(t, "restart-rewatch", src, Options{}, 4)
	for _, sr := range res.Steps {
		for impl, events := range sr.Sides {
			for _, e := range events {
				if strings.Contains(e.Text(), "429") {
					t.Errorf("step %d (%s), %s: %s; want the re-watch to meet a ready cache", sr.Index, sr.Cmd, impl, e.Text())
				}
			}
		}
	}
}

// Issue 27, case 3: wall time reaches no verdict and no trace, however
// long a person pauses between steps. etcd sends progress notifications
// every 10 minutes of wall time on the watches that ask for them: with
// that cut to 100 ms, a run paused between its steps for longer must
// print what it prints unpaused, in both worlds. (The pause is the input
// here, a person at the --step prompt, not a wait for anything.)
// kube-apiserver's cache consistency checker, the other such loop, is
// off (apistorage's TestNoWallClockConsistencyChecker).
func TestPauseBetweenStepsChangesNothing(t *testing.T) {
	src := `# Time passes for the informers, and for a person reading the trace.
# Server: any

add-handler h1
----

create ns0/a ns0/b
----

start
----

advance 70s
----

update ns0/a labels=(v=2)
----

advance 30s
----

show store
----
`
	for _, server := range []string{ServerWatchCache, ServerEtcd} {
		t.Run(server, func(t *testing.T) {
			opts := Options{Server: server, progressNotify: 100 * time.Millisecond, SettleTimeout: 3 * time.Second}
			res, err := runOne(t, "pause", src, opts)
			if err != nil {
				t.Fatal(err)
			}
			opts.OnStep = func(trace.StepResult) bool {
				time.Sleep(400 * time.Millisecond) // a person reading the step
				return true
			}
			paused, err := runOne(t, "pause", src, opts)
			if err != nil {
				t.Fatalf("paused: %v", err)
			}
			if d := cmp.Diff(fullTrace(res), fullTrace(paused)); d != "" {
				t.Errorf("the paused run printed another trace (-unpaused +paused):\n%s", d)
			}
		})
	}
}
