//go:build linux

package procstate

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/cachelab/cachelab/internal/testdeadline"
)

// These tests look at live helper processes: this test binary, run again
// with helperEnv naming what to do. They wait for conditions by polling
// /proc until a deadline, never by sleeping for a guessed time.

// helperEnv names a helper's mode; dialEnv the address mode "dial" dials.
const (
	helperEnv = "PROCSTATE_TEST_HELPER"
	dialEnv   = "PROCSTATE_TEST_DIAL"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		helper(mode)
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// helper runs one mode of a helper process:
//
//	stdin   block reading stdin, and exit when it closes
//	sleep   time.Sleep an hour in main, with a goroutine blocked on a channel
//	ticker  a loop on a 50 ms time.Ticker
//	spin    a busy loop
//	dial    dial dialEnv, write nothing, and never read the connection
//	        (block reading stdin instead, so that bytes sent stay queued)
//	parent  run a child helper in mode stdin, sharing stdin, print its
//	        pid, and wait
func helper(mode string) {
	switch mode {
	case "stdin":
		io.Copy(io.Discard, os.Stdin)
	case "sleep":
		go func() { <-make(chan int) }()
		time.Sleep(time.Hour)
	case "ticker":
		for range time.NewTicker(50 * time.Millisecond).C {
		}
	case "spin":
		for {
		}
	case "dial":
		conn, err := net.Dial("tcp", os.Getenv(dialEnv))
		if err != nil {
			fmt.Fprintln(os.Stderr, "helper dial:", err)
			os.Exit(2)
		}
		io.Copy(io.Discard, os.Stdin)
		conn.Close()
	case "parent":
		child := helperCmd("stdin")
		child.Stdin = os.Stdin
		if err := child.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "helper start child:", err)
			os.Exit(2)
		}
		fmt.Println(child.Process.Pid)
		child.Wait()
	default:
		fmt.Fprintf(os.Stderr, "helper: no mode %q\n", mode)
		os.Exit(2)
	}
}

// helperCmd is the command that runs this binary as a helper in mode. A
// helper is killed if the thread that started it dies, so that none
// outlives a test binary that crashes; Go does not end its threads.
func helperCmd(mode string, env ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), helperEnv+"="+mode), env...)
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd
}

// helperProc is a running helper and the pipes of its stdin and stdout
// this test holds.
type helperProc struct {
	pid    int
	stdin  *os.File // the write end: the helper reads EOF once it is closed
	stdout *os.File // the read end
}

// startHelper starts a helper in mode and kills and reaps it when the test
// ends.
func startHelper(t *testing.T, mode string, env ...string) helperProc {
	t.Helper()
	inR, inW, err1 := os.Pipe()
	outR, outW, err2 := os.Pipe()
	if err := errors.Join(err1, err2); err != nil {
		t.Fatal(err)
	}
	cmd := helperCmd(mode, env...)
	cmd.Stdin, cmd.Stdout = inR, outW
	if err := cmd.Start(); err != nil {
		t.Fatalf("start helper %s: %v", mode, err)
	}
	inR.Close()
	outW.Close()
	t.Cleanup(func() {
		inW.Close()
		cmd.Process.Kill()
		cmd.Wait()
		outR.Close()
	})
	return helperProc{pid: cmd.Process.Pid, stdin: inW, stdout: outR}
}

// readPid reads the pid a helper prints on its stdout, by the test
// binary's deadline (package testdeadline; none with -timeout 0): how
// soon a helper starts grows with the machine's load.
func (h helperProc) readPid(t *testing.T) int {
	t.Helper()
	deadline, _ := testdeadline.Deadline(t)
	h.stdout.SetReadDeadline(deadline)
	line, err := bufio.NewReader(h.stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("read a pid from helper %d: %v", h.pid, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("helper %d printed %q, not a pid", h.pid, line)
	}
	return pid
}

// within polls cond every 5 ms until it returns "", and fails the test
// with cond's last answer if it has not by the test binary's deadline
// (package testdeadline): how soon it does grows with the machine's load.
func within(t *testing.T, what string, cond func() string) {
	t.Helper()
	deadline := testdeadline.Context(t)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		why := cond()
		if why == "" {
			return
		}
		if deadline.Err() != nil {
			t.Fatalf("%s: still not so at the test binary's deadline: %s", what, why)
		}
		<-tick.C
	}
}

func look(t *testing.T, pids []int) Snapshot {
	t.Helper()
	s, err := Look(pids)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// looks takes n looks at pids, 5 ms apart.
func looks(t *testing.T, pids []int, n int) []Snapshot {
	t.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	out := []Snapshot{look(t, pids)}
	for len(out) < n {
		<-tick.C
		out = append(out, look(t, pids))
	}
	return out
}

// settle waits until Busy says pids are idle within horizon, then checks
// they stay idle over five more looks, and returns the last look.
func settle(t *testing.T, pids []int, horizon time.Duration) Snapshot {
	t.Helper()
	last := look(t, pids)
	within(t, fmt.Sprintf("%v idle within %v", pids, horizon), func() string {
		before := last
		last = look(t, pids)
		return Busy(before, last, horizon)
	})
	after := looks(t, pids, 5)
	for i, s := range after {
		if why := Busy(last, s, horizon); why != "" {
			t.Fatalf("%v settled, then look %d says busy: %s\nbefore: %s\nafter:  %s", pids, i+1, why,
				describe(last), describe(s))
		}
		last = s
	}
	return last
}

// alwaysBusy checks that Busy says pids are busy within horizon at each
// of ten pairs of looks, and returns its answers.
func alwaysBusy(t *testing.T, pids []int, horizon time.Duration) []string {
	t.Helper()
	s := looks(t, pids, 11)
	var whys []string
	for i := 1; i < len(s); i++ {
		why := Busy(s[i-1], s[i], horizon)
		if why == "" {
			t.Fatalf("%v idle at look %d within %v: %+v", pids, i, horizon, s[i])
		}
		whys = append(whys, why)
	}
	return whys
}

// describe lists a look's threads: "tid state syscall, ...".
func describe(s Snapshot) string {
	var b strings.Builder
	for _, th := range s.Threads {
		fmt.Fprintf(&b, "[%d/%d %c %d", th.PID, th.TID, th.State, th.Syscall.Nr)
		switch {
		case th.Syscall.Running:
			b.WriteString(" running")
		case th.Syscall.Timer.Call != "":
			fmt.Fprintf(&b, " %s", th.Syscall.Timer)
		}
		b.WriteString("] ")
	}
	return strings.TrimSpace(b.String())
}
