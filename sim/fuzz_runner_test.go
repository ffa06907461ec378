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
)

// Fuzzing the runner: random well-formed scenarios (genScenario), each
// run twice on a fresh embedded etcd. Whatever a file that Parse accepts
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

var (
	runnerStrict = flag.Bool("runner-strict", false, "FuzzRunner: fail on any divergence or run error, not only on panics, hangs and differences between runs")
	runnerLog    = flag.String("runner-log", "", "FuzzRunner: append a line per run to this file")
)

// fuzzRunTimeout bounds one run of a generated scenario. A step settles
// within Options.SettleTimeout of its last progress, and a relist backoff
// counts as progress, so a scenario of fifteen steps with failed requests
// can take a minute on a busy two-core machine; twice that is a hang.
const fuzzRunTimeout = 2 * time.Minute

// fuzzSeeds are the seed corpus: quick scenarios (a few seconds for both
// runs), passing under -runner-strict, that between them start informers
// in both stacks, restart them after a stop, and pull every lever.
var fuzzSeeds = []struct {
	seed    uint64
	classic bool
}{
	{2, true},
	{4, false},
	{9, false},
}

func FuzzRunner(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s.seed, s.classic)
	}
	f.Fuzz(func(t *testing.T, seed uint64, classic bool) {
		fc := newFuzzCase(t, seed, classic)
		first := fc.run(1)
		second := fc.run(2)
		fc.same(first, second)
		t.Logf("%s: %s (%v, %v)", fc.sc.File, first.verdict(), first.took.Round(time.Millisecond), second.took.Round(time.Millisecond))
	})
}

// fuzzCase is one generated scenario and how to run it.
type fuzzCase struct {
	t     *testing.T
	seed  uint64
	stack informer.Stack
	text  string
	sc    *Scenario
}

func newFuzzCase(t *testing.T, seed uint64, classic bool) *fuzzCase {
	fc := &fuzzCase{t: t, seed: seed, stack: informer.Default}
	if classic {
		fc.stack = informer.Classic
	}
	fc.text = genScenario(rand.New(rand.NewPCG(seed, 0)))
	// -v prints this as the test goes, so a panic in one of the runner's
	// goroutines, which ends the test binary, still shows its scenario.
	t.Logf("scenario (stack %s, seed %d):\n%s", fc.stack, seed, fc.text)
	sc, err := Parse(fmt.Sprintf("fuzz-%d-%s.txt", seed, fc.stack), []byte(fc.text))
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
	res  *Result
	err  error
	took time.Duration
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

// run runs the scenario once on its own embedded etcd. A run that
// outlives its context by half a minute is a hang: the case fails with
// the step it was in and a dump of every goroutine.
func (fc *fuzzCase) run(n int) runOutcome {
	fc.t.Helper()
	fc.log("begin run %d", n)
	ctx, cancel := context.WithTimeout(context.Background(), fuzzRunTimeout)
	defer cancel()
	var stepsDone atomic.Int64
	opts := Options{Stack: fc.stack, Seed: fc.seed, OnStep: func(StepResult) bool { stepsDone.Add(1); return true }}
	done := make(chan runOutcome, 1)
	panicked := make(chan string, 1)
	began := time.Now()
	go func() {
		defer func() {
			if p := recover(); p != nil {
				panicked <- fmt.Sprintf("%v\n%s", p, debug.Stack())
			}
		}()
		res, err := Run(ctx, fc.sc, opts)
		done <- runOutcome{res: res, err: err, took: time.Since(began)}
	}()
	var o runOutcome
	select {
	case o = <-done:
	case p := <-panicked:
		fc.log("end run %d: panic", n)
		fc.failf("run %d panicked in step %s: %s", n, fc.stepAt(int(stepsDone.Load())), p)
	case <-time.After(fuzzRunTimeout + 30*time.Second):
		fc.log("end run %d: hang", n)
		fc.failf("run %d hung: no result %v after it began, in step %s; goroutines: %s",
			n, time.Since(began).Round(time.Second), fc.stepAt(int(stepsDone.Load())), dumpGoroutines())
	}
	fc.log("end run %d: %v: %s", n, o.took.Round(time.Millisecond), o.verdict())
	if ctx.Err() != nil {
		fc.failf("run %d hung: still in step %s at its %v deadline: %s", n, fc.stepAt(int(stepsDone.Load())), fuzzRunTimeout, o.verdict())
	}
	fc.check(n, o)
	return o
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

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
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
