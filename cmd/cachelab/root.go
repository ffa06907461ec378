package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"
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
	// Getenv reads the environment (NO_COLOR).
	Getenv func(key string) string
	// IsTerminal reports whether a stream is a terminal: colour needs
	// stdout to be one, --step needs stdin to be one.
	IsTerminal func(stream any) bool
	// Now tells the time, for how long a run took (on stderr). Traces
	// never hold wall-clock time.
	Now func() time.Time
}

// NewMain returns a Main wired to the process.
func NewMain() *Main {
	return &Main{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		Getenv: os.Getenv, IsTerminal: isTerminal, Now: time.Now}
}

// Exit codes.
const (
	exitOK     = 0
	exitFailed = 1 // client-go and cachelab differed, or a step could not be carried out
	exitUsage  = 2 // bad input: command, flag, scenario name or scenario file
)

// Run runs one command line (without the program name) and returns the
// exit code. Errors are printed to Stderr.
func (m *Main) Run(ctx context.Context, args []string) int {
	root := m.rootCommand()
	// Never nil: given nil, cobra reads os.Args.
	root.SetArgs(append([]string{}, args...))
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(m.Stderr, "cachelab: %v\n", err)
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	// Anything else comes from cobra reading the command line.
	fmt.Fprintf(m.Stderr, "Run '%s --help' for usage.\n", cmd.CommandPath())
	return exitUsage
}

func (m *Main) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "cachelab",
		Short: "Run informer scenarios on cachelab and client-go side by side, and trace them",
		Long: `cachelab re-implements client-go's informer stack (tools/cache) to be read,
and proves it behaves like client-go. 'cachelab run' plays a scenario to both
informers over a real etcd and prints what each layer did at every step: the
requests, watch events, queue deltas, indexer changes and handler calls.

Exit status: 0 when client-go agreed with cachelab at every step, 1 when they
differed or a step could not be carried out, 2 for bad input.`,
		SilenceErrors: true, // Run prints them, and picks the exit code
		SilenceUsage:  true, // a failed run is not a usage mistake
	}
	root.CompletionOptions.DisableDefaultCmd = true
	root.SetIn(m.Stdin)
	root.SetOut(m.Stdout)
	root.SetErr(m.Stderr)
	root.AddCommand(m.runCommand(), m.scenariosCommand())
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

// failed marks err as a run that failed or diverged.
func failed(err error) error { return &exitError{code: exitFailed, err: err} }

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
