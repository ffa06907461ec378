package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cachelab/cachelab/internal/loopback"
	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/sim/scenario"
	"github.com/cachelab/cachelab/sim/trace"
)

// However a run ends, it closes its session, which removes the embedded
// etcd's data directory. These tests end runs in the test process, each
// in a way the scripts (signals.txtar, closed-stdout.txtar) cannot reach
// deterministically, and check $TMPDIR is empty afterwards.

// tmpdir points $TMPDIR, where the embedded etcd keeps its data, at an
// empty directory of the test's, and returns a check that it is empty.
func tmpdir(t *testing.T) func() {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	return func() {
		t.Helper()
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			t.Errorf("left behind in $TMPDIR: %s", e.Name())
		}
	}
}

// stepHook is a session whose steps call hook first: the step in progress
// when a signal arrives, or when something breaks.
type stepHook struct {
	session
	hook func(st scenario.Step)
}

func (s stepHook) Step(st scenario.Step) (trace.StepResult, error) {
	s.hook(st)
	return s.session.Step(st)
}

// withHook makes c's runs call hook before each step.
func (c *cli) withHook(hook func(scenario.Step)) {
	wrapSessions(c.Main, func(s session) session { return stepHook{session: s, hook: hook} })
}

// A signal in the middle of a step: the step returns, the run exits
// 128+15 and removes etcd's data. (main's signal handler cancels the
// run's context with the signal as its cause, as this test does.)
func TestSignalInAStepCleansUp(t *testing.T) {
	empty := tmpdir(t)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	c := newCLI("", false, nil)
	c.withHook(func(st scenario.Step) {
		if st.Cmd == "update" {
			cancel(interrupted{sig: syscall.SIGTERM})
		}
	})
	if got, want := c.Run(ctx, []string{"run", "add-update-delete"}), 143; got != want {
		t.Fatalf("exit code %d, want %d; stderr:\n%s", got, want, c.stderr.String())
	}
	if want := "cachelab: interrupted by SIGTERM at step 4 of 6 (sim/scenarios/add-update-delete.txt:33)\n"; c.stderr.String() != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", c.stderr.String(), want)
	}
	empty()
}

// A write to a closed stdout fails with EPIPE (once main has asked for
// SIGPIPE): exit 141, cleaned up.
func TestClosedStdoutCleansUp(t *testing.T) {
	empty := tmpdir(t)
	c := newCLI("", false, nil)
	c.Stdout = &closedAfter{n: 3}
	c.run(t, 141, "run", "add-update-delete")
	if !strings.HasPrefix(c.stderr.String(), "cachelab: stdout was closed (broken pipe) ") {
		t.Errorf("stderr: %s", c.stderr.String())
	}
	empty()
}

// closedAfter is a stdout whose reader goes away after n writes.
type closedAfter struct{ n int }

func (c *closedAfter) Write(b []byte) (int, error) {
	if c.n--; c.n < 0 {
		return 0, syscall.EPIPE
	}
	return len(b), nil
}

// A panic in a step is an internal error: exit 3 with the panic and its
// stack, after the deferred clean-up.
func TestPanicIsAnInternalError(t *testing.T) {
	empty := tmpdir(t)
	c := newCLI("", false, nil)
	c.withHook(func(st scenario.Step) {
		if st.Cmd == "delete" {
			panic("a broken invariant")
		}
	})
	c.run(t, exitRunError, "run", "add-update-delete")
	if got := c.stderr.String(); !strings.HasPrefix(got, "cachelab: internal error (a bug in cachelab): a broken invariant\n") ||
		!strings.Contains(got, "runtime/debug.Stack") {
		t.Errorf("stderr:\n%s", got)
	}
	empty()
}

// A scenario file over 1 MiB is refused before it is read.
func TestScenarioFileTooLarge(t *testing.T) {
	name := filepath.Join(t.TempDir(), "big.txt")
	if err := os.WriteFile(name, make([]byte, sim.MaxScenarioSize+1), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCLI("", false, nil)
	c.run(t, exitUsage, "run", name)
	if want := "cachelab: " + name + " is 1048577 bytes: a scenario file may be at most 1 MiB (1048576 bytes)\n"; c.stderr.String() != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", c.stderr.String(), want)
	}
}

// etcdctl's TLS variables apply only with endpoints: set in a shell for
// etcdctl, they leave a run on the embedded etcd alone. A flag, even
// empty, wins over its variable.
func TestEtcdEnvironment(t *testing.T) {
	env := map[string]string{"ETCDCTL_CACERT": "/nonexistent/ca.pem", "ETCDCTL_DIAL_TIMEOUT": "2s"}
	c := newCLI("", false, env)
	c.run(t, exitOK, "run", "add-update-delete")

	refused := "http://" + loopback.Refused(t)
	c = newCLI("", false, env)
	c.run(t, exitUsage, "run", "add-update-delete", "--etcd-endpoints", refused)
	if want := "cachelab: listwatch: TLS files are given but the etcd endpoints are http://"; !strings.HasPrefix(c.stderr.String(), want) {
		t.Errorf("stderr:\n%s\nwant it to start with %q (the flag's endpoints, the variable's CA file)", c.stderr.String(), want)
	}

	c = newCLI("", false, env)
	c.run(t, exitRunError, "run", "add-update-delete", "--etcd-endpoints", refused, "--etcd-cacert", "")
	if want := "cachelab: listwatch: etcd at " + refused + ": connection refused"; !strings.HasPrefix(c.stderr.String(), want) {
		t.Errorf("stderr:\n%s\nwant it to start with %q", c.stderr.String(), want)
	}
}
