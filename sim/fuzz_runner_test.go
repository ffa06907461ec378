package sim

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cachelab/cachelab/informer"
	"github.com/cachelab/cachelab/internal/testdeadline"
	"github.com/cachelab/cachelab/sim/scenario"
	"github.com/cachelab/cachelab/sim/trace"
)

// Fuzzing the runner: random well-formed scenarios (genScenario), each
// run twice at once, each run on a fresh embedded etcd. Whatever a file that Parse accepts
// asks for, the runner must not panic, must not hang, and must give the
// same verdict and the same trace both times: that is what "the trace is
// deterministic" promises.
//
// `go test ./sim` runs the seed corpus below and testdata/fuzz/FuzzRunner.
// To look for new failures (each input costs seconds: two etcds and up to
// fifteen settled steps each; minimizing a generator's seed shrinks
// nothing, so turn it off):
//
//	go test ./sim -run XXX -fuzz FuzzRunner -fuzztime 20m -parallel 1 -fuzzminimizetime 0
//
// With -runner-strict a divergence or a run error fails too: Parse
// refuses the steps a run could not carry out, so on a quiet machine
// either is a finding. -runner-log=FILE appends one line per run (seed,
// stack, time taken, verdict), written before a run starts and after it
// ends, so a run that crashed the test binary is the last line left open;
// on Linux the process's standard error goes to FILE.stderr, where such
// a crash's panic is (go test throws a fuzzing worker's output away).
// "panic: deadlocked!" there is go test's own limit of 10 s per input,
// which runLimits keeps runs under.

var (
	runnerStrict = flag.Bool("runner-strict", false, "FuzzRunner: fail on any divergence or run error, not only on panics, hangs and differences between runs")
	runnerLog    = flag.String("runner-log", "", "FuzzRunner: append a line per run to this file")
)

// A run's time limits. Without -fuzz, a step settles within the settle
// timeout of its last progress, and a relist backoff counts as progress,
// so a scenario of fifteen steps with failed requests can take a minute
// on a busy two-core machine, and longer on a busier one: a run has no
// budget of its own (0), only the test binary's deadline (package
// testdeadline), and one still going then is a hang. Its grace comes
// after that deadline, and ends well before go test's own
// (testdeadline.Margin later). Under -fuzz, go test ends a worker whose
// input takes more than 10 s ("panic: deadlocked!", with the worker's
// output thrown away), so a run gets less: a shorter settle timeout, a
// budget after which it is cancelled and the input skipped (it is not a
// failure: client-go waits its relist backoff on the real clock, seconds
// after a few failed requests), and a grace in which a cancelled run
// must end. The grace is 2.5 s: a run cancelled while
// client-go's informer sleeps a relist backoff ends once Stop has waited
// it out, which took more than 1.5 s on a loaded machine (seed 298).
type runLimits struct {
	settle, budget, grace time.Duration
}

var (
	normalLimits  = runLimits{settle: 10 * time.Second, grace: 10 * time.Second}
	fuzzingLimits = runLimits{settle: 4 * time.Second, budget: 7 * time.Second, grace: 2500 * time.Millisecond}
)

// end says what ends a run's context: its budget, or the test binary's
// deadline.
func (l runLimits) end() string {
	if l.budget > 0 {
		return fmt.Sprintf("its %v budget", l.budget)
	}
	return "the test binary's deadline"
}

// fuzzing reports whether this is a -fuzz run.
func fuzzing() bool {
	f := flag.Lookup("test.fuzz")
	return f != nil && f.Value.String() != ""
}

// fuzzSeeds are the seed corpus: quick scenarios (a few seconds for both
// runs), passing under -runner-strict, that between them start informers
// in both stacks, restart them after a stop, and pull most levers (in
// both worlds). Seed 9 is an etcd cluster in the queue world (a cluster
// run takes about 10 s): it diverged under load until settling waited
// for the member serving a watch to apply etcd's revision before asking
// it for progress (memberApplied).
var fuzzSeeds = []struct {
	seed    uint64
	classic bool
}{
	{2, true},
	{4, false},
	{9, false}, // an etcd cluster, a filtered informer, the queue world
	{10, false},
	{27, false}, // the watch-cache world
}

func FuzzRunner(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s.seed, s.classic)
	}
	f.Fuzz(func(t *testing.T, seed uint64, classic bool) {
		fc := newFuzzCase(t, seed, classic)
		// The seeds run side by side (go test; fuzzing runs one input at
		// a time, and this has no effect there), two runs each.
		parallelRuns(t, fc.stack, 2)
		// Both runs at once: half the time, and each is a busy machine
		// for the other, which a deterministic trace must not notice.
		runs := []*running{fc.start(1), fc.start(2)}
		defer fc.finish(runs)
		first, second := fc.wait(runs[0]), fc.wait(runs[1])
		fc.same(first, second)
		t.Logf("%s: %s (%v, %v)", fc.sc.File, first.verdict(), first.took.Round(time.Millisecond), second.took.Round(time.Millisecond))
	})
}

// fuzzCase is one generated scenario and how to run it.
type fuzzCase struct {
	t      *testing.T
	seed   uint64
	stack  informer.Stack
	text   string
	sc     *scenario.Scenario
	limits runLimits
}

func newFuzzCase(t *testing.T, seed uint64, classic bool) *fuzzCase {
	fc := &fuzzCase{t: t, seed: seed, stack: informer.Default, limits: normalLimits}
	if fuzzing() {
		fc.limits = fuzzingLimits
	}
	if classic {
		fc.stack = informer.Classic
	}
	fc.text = genScenario(rand.New(rand.NewPCG(seed, 0)))
	// -v prints this as the test goes, so a panic in one of the runner's
	// goroutines, which ends the test binary, still shows its scenario.
	t.Logf("scenario (stack %s, seed %d):\n%s", fc.stack, seed, fc.text)
	if fuzzing() && strings.Contains(fc.text, "\netcd-cluster") {
		// A cluster's run takes about 10 s (its members start in 2-3 s,
		// and Close waits up to 6 s for their last peer connections,
		// listwatch.waitPeerConns), and the fuzzing engine ends an input
		// that runs 10 s as hung: clusters are fuzzed by go test, which
		// runs every seed in the corpus (seed 27 among them).
		t.Skip("an etcd cluster's run outlasts the fuzzing engine's 10 s per input")
	}
	sc, err := scenario.Parse(fmt.Sprintf("fuzz-%d-%s.txt", seed, fc.stack), []byte(fc.text))
	if err != nil {
		fc.failf("genScenario wrote a file Parse refuses: %v", err)
	}
	fc.sc = sc
	return fc
}

// failf fails the case with everything needed to run it again.
func (fc *fuzzCase) failf(format string, args ...any) {
	fc.t.Helper()
	fc.t.Fatalf("%s: %s\n\nTo run it again, save the scenario below as %s and run:\n"+
		"  go run ./cmd/cachelab run --impl=both --stack=%s --seed=%d %s\n--- scenario ---\n%s",
		fc.sc.File, fmt.Sprintf(format, args...), fc.sc.File, fc.stack, fc.seed, fc.sc.File, fc.text)
}

// runOutcome is what one run gave.
type runOutcome struct {
	res    *Result
	err    error
	panic  string // what it panicked with, and where
	took   time.Duration
	inStep string // the step it was in when it ended
}

// verdict is the run's outcome in one line: the error, the divergence's
// step and layer, or ok.
func (o runOutcome) verdict() string {
	switch {
	case o.err != nil:
		return "error: " + firstLine(o.err.Error())
	case o.res != nil && o.res.Divergence != nil:
		d := o.res.Divergence
		return fmt.Sprintf("divergence at %s (%s) in layer %q", d.Pos, d.Cmd, d.Layer)
	}
	return "ok"
}

// running is a run under way on its own embedded etcd.
type running struct {
	n      int
	ctx    context.Context
	cancel context.CancelFunc
	began  time.Time
	steps  atomic.Int64 // steps done
	done   chan runOutcome
	ended  bool // its outcome was received
}

// start begins run n, bounded by the budget, or by the test binary's
// deadline.
func (fc *fuzzCase) start(n int) *running {
	fc.log("begin run %d", n)
	r := &running{n: n, began: time.Now(), done: make(chan runOutcome, 1)}
	if fc.limits.budget > 0 {
		r.ctx, r.cancel = context.WithTimeout(context.Background(), fc.limits.budget)
	} else {
		r.ctx, r.cancel = context.WithCancel(testdeadline.Context(fc.t))
	}
	opts := Options{Stack: fc.stack, Seed: fc.seed, SettleTimeout: fc.limits.settle,
		OnStep: func(trace.StepResult) bool { r.steps.Add(1); return true }}
	go func() {
		defer func() {
			if p := recover(); p != nil {
				r.done <- runOutcome{panic: fmt.Sprintf("%v\n%s", p, debug.Stack()), took: time.Since(r.began), inStep: fc.stepAt(int(r.steps.Load()))}
			}
		}()
		res, err := Run(r.ctx, fc.sc, opts)
		r.done <- runOutcome{res: res, err: err, took: time.Since(r.began), inStep: fc.stepAt(int(r.steps.Load()))}
	}()
	return r
}

// wait returns run r's outcome. A panic fails the case. So does a run
// that outlives its context (its budget, or the test binary's deadline)
// and the grace after it (a hang: the failure names the step and dumps
// every goroutine), and, without -fuzz, one that was still going when
// its context ended.
func (fc *fuzzCase) wait(r *running) runOutcome {
	fc.t.Helper()
	var o runOutcome
	select {
	case o = <-r.done:
		r.ended = true
	case <-r.ctx.Done():
		select {
		case o = <-r.done:
			r.ended = true
		case <-time.After(fc.limits.grace):
			step := fc.stepAt(int(r.steps.Load()))
			fc.log("end run %d: hang in %s", r.n, step)
			fc.failf("run %d hung: no result %v after it began (%s ended its context %v before), in step %s; goroutines: %s",
				r.n, time.Since(r.began).Round(time.Second), fc.limits.end(), fc.limits.grace, step, dumpGoroutines())
		}
	}
	fc.log("end run %d: %v: %s", r.n, o.took.Round(time.Millisecond), o.verdict())
	if o.panic != "" {
		fc.failf("run %d panicked in step %s: %s", r.n, o.inStep, o.panic)
	}
	if r.ctx.Err() != nil {
		if fuzzing() {
			fc.t.Skipf("run %d was still in step %s when its %v budget under -fuzz ran out (go test allows an input 10 s); without -fuzz it runs to its end", r.n, o.inStep, fc.limits.budget)
		}
		fc.failf("run %d hung: still in step %s when %s ended its context: %s", r.n, o.inStep, fc.limits.end(), o.verdict())
	}
	fc.check(r.n, o)
	return o
}

// finish ends the runs the case did not wait for (it failed or was
// skipped first), so that no run outlives its input by more than the
// grace.
func (fc *fuzzCase) finish(runs []*running) {
	for _, r := range runs {
		if r.ended {
			continue
		}
		r.cancel()
		select {
		case <-r.done:
		case <-time.After(fc.limits.grace):
		}
	}
}

// check holds a run's outcome to what any well-formed scenario may give.
func (fc *fuzzCase) check(n int, o runOutcome) {
	fc.t.Helper()
	if o.err != nil && !strings.HasPrefix(o.err.Error(), fc.sc.File+":") {
		fc.failf("run %d failed with an error that names no step (want %s:<line>: ...): %v", n, fc.sc.File, o.err)
	}
	if !*runnerStrict {
		return
	}
	if o.err != nil {
		fc.failf("run %d failed (-runner-strict): %v", n, o.err)
	}
	if d := o.res.Divergence; d != nil {
		fc.failf("run %d diverged (-runner-strict): %v", n, d)
	}
}

// same fails the case unless both runs gave the same verdict and trace.
func (fc *fuzzCase) same(a, b runOutcome) {
	fc.t.Helper()
	if va, vb := a.verdict(), b.verdict(); va != vb {
		fc.failf("the two runs' verdicts differ:\n  run 1: %s\n  run 2: %s\n%s", va, vb, fullErrors(a, b))
	}
	if ea, eb := errString(a.err), errString(b.err); ea != eb {
		fc.failf("the two runs' errors differ (-run 1 +run 2):\n%s", cmp.Diff(ea, eb))
	}
	if d := cmp.Diff(a.res, b.res); d != "" {
		fc.failf("the two runs' traces differ (-run 1 +run 2):\n%s", d)
	}
}

// stepAt names the scenario's i-th step (0-based), or "(after the last
// step)".
func (fc *fuzzCase) stepAt(i int) string {
	if i >= len(fc.sc.Steps) {
		return "(after the last step)"
	}
	st := fc.sc.Steps[i]
	return fmt.Sprintf("%s (%s)", fc.sc.Pos(st), st.Text)
}

// stderrOnce sends the process's standard error to -runner-log's
// ".stderr" file, once per process.
var stderrOnce sync.Once

// log appends a line to -runner-log, if given.
func (fc *fuzzCase) log(format string, args ...any) {
	if *runnerLog == "" {
		return
	}
	stderrOnce.Do(func() {
		if err := keepStderr(*runnerLog + ".stderr"); err != nil {
			fc.t.Fatalf("-runner-log: %v", err)
		}
	})
	f, err := os.OpenFile(*runnerLog, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		fc.t.Fatalf("-runner-log: %v", err)
	}
	defer f.Close()
	fmt.Fprintf(f, "%s pid=%d seed=%d stack=%s steps=%d %s\n", time.Now().Format(time.TimeOnly), os.Getpid(),
		fc.seed, fc.stack, len(fc.sc.Steps), fmt.Sprintf(format, args...))
}

// errString is err's text, "" for none.
func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func fullErrors(a, b runOutcome) string {
	var out []string
	for i, o := range []runOutcome{a, b} {
		switch {
		case o.err != nil:
			out = append(out, fmt.Sprintf("run %d's error:\n%v", i+1, o.err))
		case o.res != nil && o.res.Divergence != nil:
			out = append(out, fmt.Sprintf("run %d's divergence:\n%v", i+1, o.res.Divergence))
		}
	}
	return strings.Join(out, "\n")
}

// dumpGoroutines writes every goroutine's stack to a file and returns its
// name: a hang's stacks are long, and the failure message should stay
// readable.
func dumpGoroutines() string {
	f, err := os.CreateTemp("", "fuzzrunner-hang-*.txt")
	if err != nil {
		return fmt.Sprintf("(cannot write them: %v)", err)
	}
	defer f.Close()
	if err := pprof.Lookup("goroutine").WriteTo(f, 2); err != nil {
		return fmt.Sprintf("(cannot write them: %v)", err)
	}
	return "written to " + f.Name()
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
