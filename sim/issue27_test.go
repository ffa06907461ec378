package sim

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cachelab/cachelab/informer"
	"github.com/cachelab/cachelab/internal/goroutines"
	"github.com/cachelab/cachelab/sim/scenario"
	"github.com/cachelab/cachelab/sim/trace"
)

// runOne parses src and runs it once in the given stack and world,
// failing the test on a divergence; it returns the result and the run's
// error.
func runOne(t *testing.T, name, src string, opts Options) (*Result, error) {
	t.Helper()
	sc, err := scenario.Parse(name+".txt", []byte(src))
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
// controller with one worker over 2,000 new objects, and one with three
// over 5,000, reconciles each once in the step that created them (the
// round budget of 200 per worker failed at 201).
func TestControllerStepScalesWithKeys(t *testing.T) {
	// Beside the other parallel tests once the serial ones have run
	// (parallel_test.go): its runs take their places among -parallel's.
	t.Parallel()
	for _, tc := range []struct {
		server  string
		stack   informer.Stack
		workers string
		n       string
	}{
		{scenario.ServerWatchCache, informer.Default, "1", "2000"},
		{scenario.ServerEtcd, informer.Classic, "3", "5000"},
	} {
		t.Run(tc.server+"/"+string(tc.stack), func(t *testing.T) {
			parallelIn(t, tc.stack)
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
			if want, _ := strconv.Atoi(tc.n); got != want {
				t.Errorf("reconcile lines in the bulk-create step: %d, want %d", got, want)
			}
		})
	}
}

// Issue 27, case 1, the other half: the "never rests" diagnosis fires only
// for a key that really keeps coming back, and names it.
func TestRestlessKeyIsNamed(t *testing.T) {
	src := script("create ns0/a", "start-controller writes", "start")
	_, err := runOne(t, "restless", src, Options{Server: scenario.ServerEtcd, ctlRestless: true})
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
	// Beside the other parallel tests once the serial ones have run
	// (parallel_test.go): its runs take their places among -parallel's.
	t.Parallel()
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
			parallelIn(t, stack)
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
	parallelIn(t, informer.Classic) // its start says stack=classic
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
	for _, server := range []string{scenario.ServerWatchCache, scenario.ServerEtcd} {
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

// timePasses is a scenario in which a lot happens on the clock: resyncs,
// a handler's own resync period, a controller's requeue-after and
// backoff, the cache's bookmarks (each minute once the cache has moved
// past a watch's start, and before a watch's deadline), watches ending at
// their timeout, and a held cache a consistent read waits for.
const timePasses = `# Time passes behind the watch cache.
# Server: watchcache

add-handler h1 resync=45s
----

create ns0/a ns0/b
----

start-controller
----

start resync=30s
----

reconcile-requeue ns0/a after=100s times=3
----

reconcile-fail ns0/b times=4
----

update ns0/a labels=(v=1)
----

advance 13m
----

update ns0/a labels=(v=2)
----

advance 7m
----

hold-cache
----

update ns0/b labels=(v=3)
----

advance 70s
----

release-cache
----

advance 3m
----
`

// twoAPIServers is time passing behind two kube-apiservers, each with a
// cache of its own, one of them restarted.
const twoAPIServers = `# Time passes behind two kube-apiservers.
# Server: watchcache

add-handler h1
----

create ns0/a
----

start
----

add-apiserver
----

advance 90s
----

use-apiserver 2
----

close-watch
----

update ns0/a labels=(v=2)
----

advance 6m
----

restart-apiserver 1
----

advance 2m
----
`

// Issue 27, case 2: scenario time is cheap behind the watch cache. An
// advance passes the seconds at which nothing is due in one move of the
// clock; it must print exactly what passing them one by one prints, in
// both stacks.
func TestQuietSecondsPassInOneMove(t *testing.T) {
	// Beside the other parallel tests once the serial ones have run
	// (parallel_test.go): its runs take their places among -parallel's.
	t.Parallel()
	for _, tc := range []struct {
		name, src string
		stack     informer.Stack
	}{
		{"time-passes", timePasses, informer.Default},
		{"time-passes", timePasses, informer.Classic},
		{"two-apiservers", twoAPIServers, informer.Default},
	} {
		t.Run(tc.name+"/"+string(tc.stack), func(t *testing.T) {
			parallelIn(t, tc.stack)
			ref, err := runOne(t, tc.name, tc.src, Options{Stack: tc.stack, secondBySecond: true})
			if err != nil {
				t.Fatal(err)
			}
			quick, err := runOne(t, tc.name, tc.src, Options{Stack: tc.stack})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(fullTrace(ref), fullTrace(quick)); d != "" {
				t.Errorf("quiet seconds passed in one move print another trace (-second by second +quiet moves):\n%s", d)
			}
		})
	}
}

// Issue 27, case 2: a day behind the watch cache, with an informer and a
// controller running, is a few thousand moments, not 86,400 seconds
// (each settled): its cost is counted in the clock's moves, which do not
// depend on the machine.
func TestADayBehindTheWatchCache(t *testing.T) {
	src := script("add-handler h1", "create ns0/a", "start-controller", "start", "update ns0/a labels=(v=2)",
		"reconcile-requeue ns0/a after=1h times=30", "advance 24h", "show store")
	sc, err := scenario.Parse("a-day.txt", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	parallelIn(t, stackOf(sc))
	ses, err := Open(context.Background(), sc, Options{Seed: 1, Server: scenario.ServerWatchCache})
	if err != nil {
		t.Fatal(err)
	}
	defer ses.Close()
	for _, st := range sc.Steps {
		sr, err := ses.Step(st)
		if err != nil {
			t.Fatal(err)
		}
		if sr.Divergence != nil {
			t.Fatal(sr.Divergence)
		}
	}
	if got := ses.Clock(); got != 24*time.Hour {
		t.Errorf("clock at %v, want 24h", got)
	}
	// A bookmark a minute and a watch every 5 minutes, on one second
	// each, and the second before each: about 6,000 moves.
	if moves := ses.r.moves; moves > 8000 {
		t.Errorf("the day took %d moves of the clock; second by second is 86,400", moves)
	} else {
		t.Logf("a day behind the watch cache: %d moves of the clock", moves)
	}
}

// The "never rests" diagnosis counts within one step's rounds: a key
// reconciled once in each of 120 steps at the same moment of the
// scenario's clock rests between them.
func TestKeyReconciledEveryStepRests(t *testing.T) {
	cmds := []string{"create ns0/a", "start-controller", "start"}
	for i := range 120 {
		cmds = append(cmds, fmt.Sprintf("update ns0/a labels=(v=%d)", i))
	}
	if _, err := runOne(t, "every-step", script(cmds...), Options{Server: scenario.ServerEtcd}); err != nil {
		t.Fatal(err)
	}
}

// Issue 47, case 6: a controller's cost grew with the square of its keys
// (over HTTPS, 1,000 keys 8.6 s, 3,000 about 46 s). Each round of a
// step (one key per worker) rebuilt the set of the step's listed objects
// from every event recorded so far, and took a goroutine dump to see
// client-go's delaying loop parked. A round now costs the same at any
// number of keys: twice the keys take no more dumps, and the step's
// events are copied out of the recorder about once, when the step is
// taken (counted, not timed). No test in this package runs in parallel,
// so the process's dumps are this run's. Before: 400 keys took 405 dumps
// and 200 took 205; the recorder copied out 965,611 events for 3,606.
func TestControllerRoundsDoNotGrowWithKeys(t *testing.T) {
	measure := func(n int) (dumps int64, copied, recorded int) {
		sc, err := scenario.Parse("keys.txt", []byte(script("start-controller", "start", fmt.Sprintf("bulk-create n=%d", n))))
		if err != nil {
			t.Fatal(err)
		}
		ses, err := Open(context.Background(), sc, Options{Seed: 1, Wire: true, Server: scenario.ServerWatchCache})
		if err != nil {
			t.Fatal(err)
		}
		defer ses.Close()
		for i, st := range sc.Steps {
			before := goroutines.Dumps()
			sr, err := ses.Step(st)
			if err != nil {
				t.Fatal(err)
			}
			if sr.Divergence != nil {
				t.Fatal(sr.Divergence)
			}
			if i == len(sc.Steps)-1 {
				rec := ses.r.sides[0].rec
				return goroutines.Dumps() - before, rec.Copied(), rec.Count()
			}
		}
		panic("no steps")
	}
	// Settling polls while the cache takes in the step's writes, and a
	// poll that finds things moved takes a dump: how many depends on the
	// machine. A dump a round is 600 more for 600 more keys; half that
	// is far above the polls' noise.
	d1, _, _ := measure(200)
	d2, copied, recorded := measure(800)
	t.Logf("goroutine dumps: %d for 200 keys, %d for 800; events copied out: %d of %d", d1, d2, copied, recorded)
	if d2-d1 > 300 {
		t.Errorf("the step with 800 keys took %d goroutine dumps, the one with 200 %d: a dump a key", d2, d1)
	}
	if copied > 2*recorded {
		t.Errorf("the recorder copied out %d events, of %d recorded: the step's events again in every round", copied, recorded)
	}
}
