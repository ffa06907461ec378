package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

// How a run ends early, and cleans up on the way out.
//
// A run owns things outside the process: the embedded etcd's data
// directory (over 100 MB in $TMPDIR), or its key prefix in an external
// etcd. sim.Session.Close (and, for the directory, datadir.go) removes
// them, so every way a run can end must reach it:
//
//	SIGINT, SIGTERM, SIGHUP ──► cancel the run's context ──► the step in progress returns ──┐
//	a write to a closed stdout ──► fails with EPIPE ───────► the printer returns the error ──┤
//	                                                                                          ▼
//	                                       run returns ──► its deferred Close ──► exit 128+n
//
// Go's default for these signals is to end the process at once, and for
// SIGPIPE, after a write to a closed stdout, too; neither runs deferred
// calls. So main asks for all of them (notifyContext).
//
// That clean-up is prompt (on an etcd cluster too: listwatch's stop.go),
// but a user who presses Ctrl-C again wants out now, not later. A second
// signal ends the process at once (atOnce), and still leaves nothing in
// $TMPDIR: the CLI makes the embedded etcd's data directory itself,
// before etcd starts, so at any moment it knows what to remove, and
// removes it before it exits. What it cannot remove at once, the keys of
// a run on an external etcd (that takes a round trip to an etcd that may
// be what is slow), it names, for etcdctl. A third signal ends the
// process whatever it is doing.

// stopSignals stop a run: Ctrl-C, kill's default, and the terminal
// closing. One the process started with ignored stays ignored: nohup
// ignores SIGHUP so that a run outlives its terminal, and a shell without
// job control ignores SIGINT in the commands it runs with &.
func stopSignals() []os.Signal {
	var sigs []os.Signal
	for _, s := range []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP} {
		if !signal.Ignored(s) {
			sigs = append(sigs, s)
		}
	}
	return sigs
}

// interrupted is why a run's context was cancelled: a signal.
type interrupted struct{ sig syscall.Signal }

func (i interrupted) Error() string { return "interrupted by " + signalName(i.sig) }

// code is the exit code a shell gives a process killed by the signal.
func (i interrupted) code() int { return exitSignalBase + int(i.sig) }

func signalName(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	}
	return sig.String()
}

// notifyContext returns a context that the first stop signal cancels,
// with an interrupted as its cause. A second stop signal calls again (on
// the signal's goroutine, while the first one's clean-up goes on), after
// which the signals' default comes back, so a third ends the process at
// once. It also makes a write to a closed stdout fail with EPIPE instead
// of killing the process, so that the run stops through its write error
// and cleans up. stop releases the signals.
func notifyContext(parent context.Context, again func(syscall.Signal)) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	stoppers := stopSignals()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, stoppers...)
	// Notified, SIGPIPE no longer kills the process: the write that
	// raised it returns EPIPE. The channel is never read; the runtime
	// drops what does not fit.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		select {
		case s := <-sigs:
			cancel(interrupted{sig: s.(syscall.Signal)})
		case <-quit:
			return
		}
		select {
		case s := <-sigs:
			signal.Reset(stoppers...)
			again(s.(syscall.Signal))
		case <-quit:
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(quit)
		cancel(nil)
		<-done
	}
}

// atOnce is the answer to a second stop signal: remove what the run made
// in $TMPDIR, name what it left in an external etcd, and exit 128+n. The
// clean-up the first signal began is abandoned where it is: etcd, still
// running in this process, ends with it.
func (m *Main) atOnce(sig syscall.Signal) {
	m.quitting.Store(true)
	m.mu.Lock()
	dir, s := m.dataDir, m.running
	m.mu.Unlock()
	what := "nothing was left to remove"
	if dir != "" {
		what = "the embedded etcd's data directory is removed"
		if err := removeDataDir(dir); err != nil {
			what = fmt.Sprintf("the embedded etcd's data directory could not be removed: %v", err)
		}
	} else if s != nil && s.KeyPrefix() != "" {
		what = fmt.Sprintf("the run's keys may be left in etcd: etcdctl del --prefix %s", s.KeyPrefix())
	}
	fmt.Fprintf(m.Stderr, "cachelab: %s again: stopping at once; %s\n", signalName(sig), what)
	m.exit(exitSignalBase + int(sig))
}

// stopped is the error for a run that ctx stopped, where says when: its
// exit code is the signal's (130 if ctx has no signal as its cause, as
// for Ctrl-C).
func stopped(ctx context.Context, where string) error {
	var sig interrupted
	if !errors.As(context.Cause(ctx), &sig) {
		sig = interrupted{sig: syscall.SIGINT}
	}
	return &exitError{code: sig.code(), err: fmt.Errorf("%v %s", sig, where)}
}

// ended is the error a command that returned err ended with, said the
// same way for every command (Run asks it of each): a command stopped by
// a signal (ctx's cause) exits 128 plus its number, and one whose stdout
// was closed by its reader (EPIPE) exits 141, whatever error the stop
// surfaced as on the way out (a context canceled from deep inside a run,
// a failed write). A command that knows where it was stopped says so
// itself (run: "at step 4 of 6"), and ended keeps its words; for the
// others, where is the command.
func ended(ctx context.Context, cmd *cobra.Command, err error) error {
	var ee *exitError
	where := "in 'cachelab'"
	if cmd != nil {
		where = "in '" + cmd.CommandPath() + "'"
	}
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ee) && ee.code >= exitSignalBase:
		return err
	case signalled(ctx):
		return stopped(ctx, where)
	case errors.Is(err, syscall.EPIPE):
		return closedStdout(err, where)
	}
	return err
}

// signalled reports whether a stop signal cancelled ctx.
func signalled(ctx context.Context) bool {
	var sig interrupted
	return errors.As(context.Cause(ctx), &sig)
}

// closedStdout is the error for a run whose stdout was closed by its
// reader (EPIPE), as `cachelab run ... | head` does: exit 141, SIGPIPE's
// code, which is what the shell would report had the write killed the
// process.
func closedStdout(err error, where string) error {
	return &exitError{code: exitSignalBase + int(syscall.SIGPIPE), err: fmt.Errorf("stdout was closed (%v) %s", err, where)}
}
