package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/cachelab/cachelab/internal/apiworld"
)

// Script commands that run one command in the background and act on it
// while it runs, as a user at a terminal would: wait for a line, press
// Ctrl-C, close the terminal, quit the pager reading stdout. testscript's
// own `exec ... &` keeps a background command's output out of reach until
// it ends, and its `kill` knows only INT and KILL.
//
//	start cachelab run add-update-delete --step
//	waitfor stderr 'Enter: step 2 of'
//	signal TERM
//	exitcode 143
//
// Every wait ends at the test binary's deadline (package testdeadline),
// not after seconds of its own: waiting for a condition, never for a
// time, however long a loaded machine takes to meet it.

// procKey is the key of a script's procSlot in testscript's per-script
// values.
type procKey struct{}

// procSlot holds a script's started command, if any, and what the mute
// command's listener has heard.
type procSlot struct {
	p *proc
	// cluster is the world cmdCluster started (cluster_test.go).
	cluster *apiworld.World
	// deadline ends at the test binary's deadline, less testdeadline's
	// margin: the one bound on the script's waits.
	deadline context.Context
	// dialed is closed when the mute listener accepts its first
	// connection (nil before mute).
	dialed <-chan struct{}
}

// setupProcs waits for one of the places (places_test.go), gives each
// script a slot for the command it starts, its waits bounded by deadline
// (testdeadline.Context of the test that runs the scripts), and stops
// that command if the script ends first.
func setupProcs(env *testscript.Env, deadline context.Context) error {
	env.Defer(takePlace()) // the script's place, released last
	slot := &procSlot{deadline: deadline}
	env.Values[procKey{}] = slot
	env.Defer(func() {
		if slot.p != nil {
			slot.p.kill()
		}
	})
	return nil
}

// proc is a started command: its output so far, its terminal, its end.
type proc struct {
	cmd        *exec.Cmd
	ptm, tty   *os.File // the terminal on its stdin: ptm is our end
	stdoutR    *os.File // our end of its stdout pipe
	mu         sync.Mutex
	out        map[string]*bytes.Buffer // "stdout", "stderr"
	grew       chan struct{}            // closed and replaced when output arrives
	copied     sync.WaitGroup           // the goroutines reading its output
	exited     chan struct{}
	signalled  time.Time // when it was last told to stop
	waitResult error
}

func slotOf(ts *testscript.TestScript) *procSlot { return ts.Value(procKey{}).(*procSlot) }

// cmdStart starts a command with a terminal on its stdin and its stdout
// and stderr read as they come.
//
//	start cachelab run add-update-delete --step
func cmdStart(ts *testscript.TestScript, neg bool, args []string) {
	slot := slotOf(ts)
	if neg || len(args) == 0 || slot.p != nil {
		ts.Fatalf("usage: start <command> [args...] (one command at a time)")
	}
	p, err := startProc(ts, args)
	ts.Check(err)
	slot.p = p
}

// catchSIGHUP makes the commands the tests start begin with SIGHUP's
// default action. A test process started under nohup ignores SIGHUP, and
// an ignored signal stays ignored across exec; cachelab leaves it so on
// purpose (a run under nohup outlives its terminal), so the SIGHUP case
// would fail. A caught signal is reset to its default by exec.
var catchSIGHUP sync.Once

func startProc(ts *testscript.TestScript, args []string) (*proc, error) {
	catchSIGHUP.Do(func() {
		if signal.Ignored(syscall.SIGHUP) {
			signal.Notify(make(chan os.Signal, 1), syscall.SIGHUP)
		}
	})
	path, err := lookPath(ts, args[0])
	if err != nil {
		return nil, err
	}
	var opened []*os.File // closed if the start fails
	fail := func(err error) (*proc, error) {
		for _, f := range opened {
			f.Close()
		}
		return nil, err
	}
	ptm, tty, err := openPTY()
	if err != nil {
		return fail(err)
	}
	opened = append(opened, ptm, tty)
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		return fail(err)
	}
	opened = append(opened, stdoutR, stdoutW)
	stderrR, stderrW, err := os.Pipe()
	if err != nil {
		return fail(err)
	}
	opened = append(opened, stderrR, stderrW)
	p := &proc{cmd: exec.Command(path, args[1:]...), ptm: ptm, tty: tty, stdoutR: stdoutR,
		exited: make(chan struct{}), grew: make(chan struct{}), out: map[string]*bytes.Buffer{"stdout": {}, "stderr": {}}}
	p.cmd.Dir, p.cmd.Env = ts.MkAbs("."), scriptEnv(ts)
	p.cmd.Stdin, p.cmd.Stdout, p.cmd.Stderr = tty, stdoutW, stderrW
	if err := p.cmd.Start(); err != nil {
		return fail(err)
	}
	stdoutW.Close() // the command has its own copies of the write ends
	stderrW.Close()
	p.copied.Add(2)
	go p.copy("stdout", stdoutR)
	go p.copy("stderr", stderrR)
	go func() {
		p.waitResult = p.cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// scriptEnv is the part of the script's environment the started commands
// use. (testscript gives its own commands all of it, but custom commands
// can only ask for variables by name.)
func scriptEnv(ts *testscript.TestScript) []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "TMPDIR", "WORK", "NO_COLOR",
		"ETCDCTL_ENDPOINTS", "ETCDCTL_CACERT", "ETCDCTL_CERT", "ETCDCTL_KEY", "ETCDCTL_DIAL_TIMEOUT"} {
		if v := ts.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

func lookPath(ts *testscript.TestScript, name string) (string, error) {
	for _, dir := range filepath.SplitList(ts.Getenv("PATH")) {
		path := filepath.Join(dir, name)
		if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return path, nil
		}
	}
	return "", fmt.Errorf("%s: not found in $PATH", name)
}

// copy reads one of the command's streams until it ends, or until the
// script closes our end of it.
func (p *proc) copy(name string, r *os.File) {
	defer p.copied.Done()
	buf := make([]byte, 4096)
	for {
		n, err := r.Read(buf)
		p.mu.Lock()
		p.out[name].Write(buf[:n])
		close(p.grew)
		p.grew = make(chan struct{})
		p.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// cmdWaitfor waits until the started command's stdout or stderr matches
// a regular expression.
//
//	waitfor stderr 'Enter: step 2 of'
func cmdWaitfor(ts *testscript.TestScript, neg bool, args []string) {
	slot := slotOf(ts)
	p := slot.p
	if neg || len(args) != 2 || (args[0] != "stdout" && args[0] != "stderr") || p == nil {
		ts.Fatalf("usage: waitfor stdout|stderr <regexp> (after start)")
	}
	re, err := regexp.Compile(args[1])
	ts.Check(err)
	for {
		p.mu.Lock()
		matched, grew := re.Match(p.out[args[0]].Bytes()), p.grew
		p.mu.Unlock()
		if matched {
			return
		}
		select {
		case <-grew:
		case <-p.exited:
			p.copied.Wait()
			p.mu.Lock()
			matched = re.Match(p.out[args[0]].Bytes())
			p.mu.Unlock()
			if !matched {
				ts.Fatalf("the command exited (%v) and its %s never matched %q:\n%s", p.waitResult, args[0], args[1], p.output())
			}
			return
		case <-slot.deadline.Done():
			ts.Fatalf("at the test binary's deadline, the command's %s still does not match %q:\n%s", args[0], args[1], p.output())
		}
	}
}

// cmdWaitdialed waits until something connects to the mute listener:
// the started command is then waiting for an etcd that never answers.
//
//	waitdialed
func cmdWaitdialed(ts *testscript.TestScript, neg bool, args []string) {
	slot := slotOf(ts)
	if neg || len(args) != 0 || slot.dialed == nil {
		ts.Fatalf("usage: waitdialed (after mute)")
	}
	select {
	case <-slot.dialed:
	case <-slot.deadline.Done():
		ts.Fatalf("nothing connected to the mute listener by the test binary's deadline")
	}
}

// cmdSignal sends the started command a signal.
//
//	signal INT|TERM|HUP
func cmdSignal(ts *testscript.TestScript, neg bool, args []string) {
	sigs := map[string]syscall.Signal{"INT": syscall.SIGINT, "TERM": syscall.SIGTERM, "HUP": syscall.SIGHUP}
	p := slotOf(ts).p
	if neg || len(args) != 1 || sigs[args[0]] == 0 || p == nil {
		ts.Fatalf("usage: signal INT|TERM|HUP (after start)")
	}
	p.signalled = time.Now()
	ts.Check(p.cmd.Process.Signal(sigs[args[0]]))
}

// cmdClosestdout closes the reading end of the started command's stdout,
// as a pager or `head` does when it has read enough: its next write
// fails.
//
//	closestdout
func cmdClosestdout(ts *testscript.TestScript, neg bool, args []string) {
	p := slotOf(ts).p
	if neg || len(args) != 0 || p == nil {
		ts.Fatalf("usage: closestdout (after start)")
	}
	p.signalled = time.Now()
	ts.Check(p.stdoutR.Close())
}

// cmdEnter presses Enter on the started command's terminal.
//
//	enter
func cmdEnter(ts *testscript.TestScript, neg bool, args []string) {
	p := slotOf(ts).p
	if neg || len(args) != 0 || p == nil {
		ts.Fatalf("usage: enter (after start)")
	}
	_, err := p.ptm.Write([]byte("\n"))
	ts.Check(err)
}

// cmdExitcode waits for the started command to exit and checks its exit
// code; its stdout and stderr become the script's, for `stdout` and
// `stderr` to check. After a signal or closestdout, it logs how long the
// command took to exit, and holds it to no bound: a test's verdict must
// not depend on the machine's load (listwatch's BenchmarkClusterStartStop
// measures the stop that used to wait on etcd's timeouts).
//
//	exitcode 130
func cmdExitcode(ts *testscript.TestScript, neg bool, args []string) {
	slot := slotOf(ts)
	p := slot.p
	want, err := strconv.Atoi(args[len(args)-1])
	if neg || len(args) != 1 || err != nil || p == nil {
		ts.Fatalf("usage: exitcode <code> (after start)")
	}
	what := "started"
	if !p.signalled.IsZero() {
		what = "told to stop"
	}
	select {
	case <-p.exited:
	case <-slot.deadline.Done():
		ts.Fatalf("the command %s has not exited by the test binary's deadline:\n%s", what, p.output())
	}
	if !p.signalled.IsZero() {
		ts.Logf("[exited %v after it was told to stop]", time.Since(p.signalled).Round(time.Millisecond))
	}
	slot.p = nil
	p.release()
	fmt.Fprint(ts.Stdout(), p.out["stdout"].String())
	fmt.Fprint(ts.Stderr(), p.out["stderr"].String())
	got, err := exitCode(p.waitResult)
	ts.Check(err)
	if got != want {
		ts.Fatalf("the command exited with %d, want %d:\n%s", got, want, p.output())
	}
}

func exitCode(err error) (int, error) {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, nil
	case !errors.As(err, &ee):
		return 0, err
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 0, fmt.Errorf("the command was killed by %v: it did not handle the signal", ws.Signal())
	}
	return ee.ExitCode(), nil
}

// output is what the command printed, for a failure message.
func (p *proc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return fmt.Sprintf("[stdout]\n%s[stderr]\n%s", p.out["stdout"], p.out["stderr"])
}

// release closes our ends once the command has exited. It reads the
// command's output to its end first: what the command wrote just before
// it exited (a JSON stream's summary) may not have been read yet, and
// closing our end would drop it. The copies end by themselves, since the
// command, which starts no processes of its own, has closed its ends.
func (p *proc) release() {
	p.copied.Wait()
	p.stdoutR.Close() // closed already after closestdout
	p.tty.Close()
	p.ptm.Close()
}

// kill ends a command the script left running.
func (p *proc) kill() {
	_ = p.cmd.Process.Kill()
	<-p.exited
	p.release()
}
