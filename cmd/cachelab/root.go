package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	"k8s.io/utils/clock"

	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/sim/explore"
	"github.com/cachelab/cachelab/sim/scenario"
	"github.com/cachelab/cachelab/sim/trace"
)

// Main is the cachelab command and everything it touches outside itself:
// its streams, its environment, its clock. main wires it to the process;
// tests wire it to buffers and run the whole CLI in the test process.
//
// benbjohnson/wtf's Main also has ParseFlags and Close; here cobra parses
// the flags, and each run closes what it opened before it returns, so Run
// is all there is.
type Main struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Getenv reads the environment (NO_COLOR, and the ETCDCTL_ variables
	// that stand in for the --etcd flags).
	Getenv func(key string) string
	// IsTerminal reports whether a stream is a terminal: colour needs
	// stdout to be one, --step needs stdin to be one.
	IsTerminal func(stream any) bool
	// Now tells the time, for how long a run took (on stderr). Traces
	// never hold wall-clock time.
	Now func() time.Time
	// NewTicker ticks the progress line's redraws (progress.go): the real
	// clock's, or a fake one's in tests.
	NewTicker func(time.Duration) clock.Ticker

	// open starts a run: sim.Open, or in tests a stand-in around it.
	open func(context.Context, *scenario.Scenario, sim.Options) (session, error)
	// exploreRun runs an exploration: explore.Run, or in tests a
	// stand-in around it.
	exploreRun func(context.Context, *scenario.Scenario, explore.Options) (*explore.Exploration, error)
	// cpusUsable is how many CPUs explore's -j auto counts:
	// runtime.GOMAXPROCS if nil, a fixed number in tests.
	cpusUsable func() int
	// exiting is set when the process ends with the run (runProcess):
	// the run then closes without waiting for etcd's last goroutines.
	exiting bool
	// exit ends the process (os.Exit) where a run cannot return: a panic
	// on another goroutine, a second stop signal.
	exit func(code int)

	// running is the session of the run in progress, and dataDir the
	// embedded etcd's data directory, for a panic on another goroutine
	// or a second signal to abandon (crash.go, signals.go).
	mu      sync.Mutex
	running session
	dataDir string
	// quitting is set once the process ends at once, before the data
	// directory goes: etcd's fatal errors wait for the end (etcdLogger).
	quitting atomic.Bool
}

// session is what a run needs of a *sim.Session.
type session interface {
	Header() trace.Header
	Step(scenario.Step) (trace.StepResult, error)
	Finish() *trace.Divergence
	// Clock is how far the run's fake clock has moved.
	Clock() time.Duration
	Close()
	// Progress is how far the run has got; unlike the others, it is
	// called while Step runs, from the progress line's goroutine.
	Progress() sim.Progress
	// Abandon removes what the run wrote outside the process without
	// waiting for its informers (a goroutine panicked).
	Abandon()
	// LeftBehind is what Close could not remove (a cluster's namespace).
	LeftBehind() error
	// KeyPrefix is where the run writes in an external etcd, "" on the
	// embedded one.
	KeyPrefix() string
}

// NewMain returns a Main wired to the process.
func NewMain() *Main {
	return &Main{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		Getenv: os.Getenv, IsTerminal: isTerminal, Now: time.Now, NewTicker: clock.RealClock{}.NewTicker, open: openSession,
		exploreRun: explore.Run, exit: os.Exit}
}

func openSession(ctx context.Context, sc *scenario.Scenario, opts sim.Options) (session, error) {
	s, err := sim.Open(ctx, sc, opts)
	if err != nil {
		return nil, err // not a session holding a nil *sim.Session
	}
	return s, nil
}

// Exit codes. Each says one thing, so that a script can tell a
// divergence from a run that could not go on.
const (
	exitOK       = 0
	exitDiverged = 1 // client-go differed from cachelab
	exitUsage    = 2 // bad input, before the run: command, flag, scenario, a step its options cannot carry out, an output file, etcd endpoint or TLS file
	exitRunError = 3 // the run could not go on: etcd, a step that failed, a settle timeout, an internal error
	// 128+n: stopped by signal n, as a shell reports a process killed by
	// it: 130 SIGINT (Ctrl-C), 143 SIGTERM, 129 SIGHUP, and 141 (SIGPIPE's
	// number) when stdout was closed by its reader.
	exitSignalBase = 128
)

// exitHelp is the exit status paragraph of the root and run help texts.
const exitHelp = `Exit status: 0 when client-go agreed with cachelab at every step; 1 when it
differed, or when a step printed something other than the scenario file
expects; 2 for bad input, found before the run starts (an unknown command,
flag or scenario, a missing, malformed or non-regular scenario file, a
step the run's options cannot carry out, an output file that cannot be
written or is the scenario, a malformed etcd endpoint, a missing TLS file
or a CA file with no certificate, a kubeconfig that does not exist or has
no such context); 3 when the run could not go on (etcd or the cluster
could not be started or reached, a step could not be carried out,
cachelab did not settle, an internal error). Stopped by a signal, the run
removes what it made (the embedded etcd's data, or its keys in an external
etcd) and exits 128 plus the signal's number: 130 for SIGINT (Ctrl-C), 143
for SIGTERM, 129 for SIGHUP, and 141 when stdout is closed by its reader
(as by 'head'). A second signal, during that clean-up, ends the run at
once: it still removes the embedded etcd's data, and names the key prefix
it may leave in an external etcd; a third ends the process whatever it is
doing.`

// Run runs one command line (without the program name) and returns the
// exit code. Errors are printed to Stderr. A panic in the command is an
// internal error (exit 3), reported with its stack; the run's deferred
// clean-up has already run by then.
func (m *Main) Run(ctx context.Context, args []string) (code int) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(m.Stderr, "cachelab: internal error (a bug in cachelab): %v\n%s", p, debug.Stack())
			code = exitRunError
		}
	}()
	root := m.rootCommand()
	// Never nil: given nil, cobra reads os.Args.
	root.SetArgs(append([]string{}, args...))
	cmd, err := root.ExecuteContextC(ctx)
	if err = ended(ctx, cmd, err); err == nil {
		return exitOK
	}
	if nl := notLinked(err); nl != nil && m.exiting {
		return m.relink(ctx, args, nl)
	}
	m.errorf("cachelab: %v", err)
	var ee *exitError
	if !errors.As(err, &ee) {
		// It comes from cobra reading the command line.
		fmt.Fprintf(m.Stderr, "Run '%s --help' for usage.\n", cmd.CommandPath())
	}
	return exitStatus(err)
}

func (m *Main) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "cachelab",
		Short: "Run informer scenarios on cachelab and client-go side by side, and trace them",
		Long: `cachelab re-implements client-go's informer stack (tools/cache) to be read,
and proves it behaves like client-go. 'cachelab run' plays a scenario to both
informers over a real etcd and prints what each layer did at every step: the
requests, watch events, queue deltas, indexer changes and handler calls.

` + exitHelp,
		SilenceErrors: true, // Run prints them, and picks the exit code
		SilenceUsage:  true, // a failed run is not a usage mistake
	}
	root.CompletionOptions.DisableDefaultCmd = true
	root.SetIn(m.Stdin)
	root.SetOut(m.Stdout)
	root.SetErr(m.Stderr)
	root.AddCommand(m.runCommand(), m.exploreCommand(), m.serveCommand(), m.scenariosCommand(), m.recordCommand(), m.replayCommand(), m.versionCommand())
	return root
}

// exitError is an error with the exit code it calls for. Errors without
// one come from cobra's reading of the command line (an unknown command or
// flag, a bad flag value, a wrong number of arguments) and exit with
// exitUsage.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usage marks err as a mistake in the input.
func usage(err error) error { return &exitError{code: exitUsage, err: err} }

// runError marks err as a run that could not go on.
func runError(err error) error { return &exitError{code: exitRunError, err: err} }

func isTerminal(stream any) bool {
	f, ok := stream.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(f.Fd()))
}

// choice is a flag that takes one of a few words. Its type, shown in the
// help, lists them: --impl cachelab|client-go|both.
type choice struct {
	value   string
	allowed []string
}

func (c *choice) String() string { return c.value }
func (c *choice) Type() string   { return strings.Join(c.allowed, "|") }

func (c *choice) Set(s string) error {
	if !slices.Contains(c.allowed, s) {
		return fmt.Errorf("want one of %s", strings.Join(c.allowed, ", "))
	}
	c.value = s
	return nil
}
