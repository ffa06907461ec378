package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/cachelab/cachelab/cluster"
	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/sim/scenario"
	"github.com/cachelab/cachelab/sim/trace"
)

// How a run's end is told to a tool. stderr says it in words (Run prints
// the error); with --output json, the stream ends with an error record
// when the run failed, then a summary record, whatever happened:
//
//	run returns err ──► printer.end ──► {"record":"error",...}   (err != nil: failureOf)
//	                                └─► {"record":"summary",...} (always: verdict, exit, steps, clock, counts)
//
// Only a stdout that cannot be written to (closed by its reader), a flag
// cobra could not parse, and a crash on another goroutine (crash.go) end
// the stream without them.

// outcome is what the summary says of a run besides its verdict, filled
// in as the run goes.
type outcome struct {
	began    time.Time // wall clock: how long the run took, for stderr and wallTimeMs
	scenario string    // the scenario's name, or what was asked for until it is loaded
	total    int       // its steps
	ran      int       // steps run to the end
	started  bool      // a session was opened: clock means something
	clock    time.Duration
}

// stepFailure is an error at a step of the scenario, with what the JSON
// error record says of it besides its message: its kind and where.
type stepFailure struct {
	at  trace.Failure
	err error
}

func (s *stepFailure) Error() string { return s.err.Error() }
func (s *stepFailure) Unwrap() error { return s.err }

// atStep marks err as a failure of kind at step n of sc, st.
func atStep(err error, kind trace.FailureKind, n int, sc *scenario.Scenario, st scenario.Step) error {
	return &stepFailure{at: trace.Failure{Kind: kind, Step: n, Pos: sc.Pos(st), Cmd: st.Text}, err: err}
}

// refused is the error for a scenario the run's options cannot carry
// out (sim.Check): bad input, exit 2, naming the step it would have
// failed at.
func refused(err error, sc *scenario.Scenario) error {
	var re *sim.RefusedError
	if !errors.As(err, &re) {
		return usage(err)
	}
	return atStep(usage(err), trace.FailUsage, re.Step, sc, sc.Steps[re.Step-1])
}

// clusterFailed is the error for a cluster that cluster.Open could not
// open: a kubeconfig that names no cluster to use is bad input, found
// before anything is reached (exit 2); a cluster that does not answer is
// a run that could not go on (exit 3).
func clusterFailed(err error) error {
	if ke := (*cluster.KubeconfigError)(nil); errors.As(err, &ke) {
		return usage(err)
	}
	return runError(err)
}

// exitStatus is the exit status err calls for: an exitError's code; any
// other error comes from cobra's reading of the command line, a usage
// mistake.
func exitStatus(err error) int {
	var ee *exitError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ee):
		return ee.code
	}
	return exitUsage
}

// failureOf is the error record for err: its kind and its step where it
// has one (stepFailure), a parse error's file:line, or else its kind by
// its exit status.
func failureOf(err error) trace.Failure {
	var (
		at *stepFailure
		pe *scenario.ParseError
		f  trace.Failure
	)
	switch code := exitStatus(err); {
	case errors.As(err, &at):
		f = at.at
	case errors.As(err, &pe):
		f = trace.Failure{Kind: trace.FailParse, Pos: fmt.Sprintf("%s:%d", pe.File, pe.Line)}
	case code >= exitSignalBase:
		f.Kind = trace.FailInterrupted
	case code == exitUsage:
		f.Kind = trace.FailUsage
	default:
		f.Kind = trace.FailRun
	}
	f.Message = err.Error()
	return f
}

// verdictOf is the summary's one word for how the run went.
func verdictOf(f *trace.Failure, out *outcome) trace.Verdict {
	switch {
	case f == nil && out.ran < out.total:
		return trace.VerdictStopped
	case f == nil:
		return trace.VerdictAgreed
	case f.Kind == trace.FailDivergence:
		return trace.VerdictDiverged
	case f.Kind == trace.FailUnexpected:
		return trace.VerdictUnexpected
	case f.Kind == trace.FailInterrupted:
		return trace.VerdictInterrupted
	}
	return trace.VerdictError
}

// end ends a JSON stream: the error record if the run failed, then the
// summary. It returns the run's error or, for a run that went well, the
// error writing the summary. A text trace has ended already (run's
// summary line, and stderr).
func (p *printer) end(err error, out *outcome, now time.Time) error {
	if p.html != nil {
		err = p.html.write(err)
	}
	if p.mm != nil {
		return p.endMermaid(err)
	}
	if p.jw == nil {
		return err
	}
	s := trace.Summary{Scenario: out.scenario, Exit: exitStatus(err), StepsTotal: out.total, WallTimeMs: now.Sub(out.began).Milliseconds()}
	if out.started {
		s.SetClock(out.clock)
	}
	var f *trace.Failure
	if err != nil {
		fl := failureOf(err)
		f = &fl
		_ = p.jw.Error(fl) // the run's error is the one to report; a write error shows in the summary's
	}
	s.Verdict = verdictOf(f, out)
	werr := p.jw.Summary(s)
	if err != nil {
		return err
	}
	return writeError(werr, "at the end")
}
