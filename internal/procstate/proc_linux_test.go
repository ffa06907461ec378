//go:build linux

package procstate

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cachelab/cachelab/internal/testdeadline"
)

// These tests look at live helper processes, started by helper_linux_test.go.

func TestIdleReadingStdin(t *testing.T) {
	t.Parallel()
	pid := startHelper(t, "stdin").pid
	s := settle(t, []int{pid}, time.Second)
	t.Logf("idle: %s", describe(s))
}

func TestIdleSleeping(t *testing.T) {
	t.Parallel()
	pid := startHelper(t, "sleep").pid
	s := settle(t, []int{pid}, time.Second)
	t.Logf("idle: %s", describe(s))

	why := Busy(s, s, 2*time.Hour)
	if !strings.Contains(why, "waits on a timer due within") {
		t.Errorf("Busy within 2h = %q, want a timer", why)
	}
	i := slices.IndexFunc(s.Threads, func(th Thread) bool { return th.Syscall.Timer.Call != "" })
	if i < 0 {
		t.Fatalf("no thread in an epoll wait: %s", describe(s))
	}
	w := s.Threads[i].Syscall.Timer
	if !w.Known || w.Timeout < 3_000_000*time.Millisecond || w.Timeout > 3_600_000*time.Millisecond {
		t.Errorf("the sleeper's %s, want a timeout between 3,000,000 and 3,600,000 ms", w)
	}
}

func TestBusyTicking(t *testing.T) {
	t.Parallel()
	pid := startHelper(t, "ticker").pid
	within(t, "an epoll wait of at most 50ms", func() string {
		s := look(t, []int{pid})
		for _, th := range s.Threads {
			if w := th.Syscall.Timer; w.Known && w.Timeout >= 0 && w.Timeout <= 50*time.Millisecond {
				return ""
			}
		}
		return describe(s)
	})
	whys := alwaysBusy(t, []int{pid}, time.Second)
	if !slices.ContainsFunc(whys, func(why string) bool {
		return strings.Contains(why, "waits on a timer due within") || strings.Contains(why, "ran between the looks")
	}) {
		t.Errorf("Busy said %q; want a timer or a run between the looks among them", whys)
	}
}

func TestBusySpinning(t *testing.T) {
	t.Parallel()
	pid := startHelper(t, "spin").pid
	whys := alwaysBusy(t, []int{pid}, time.Second)
	t.Logf("spinning: %s", whys[len(whys)-1])
}

func TestTreeFindsChild(t *testing.T) {
	t.Parallel()
	h := startHelper(t, "parent")
	parent, child := h.pid, h.readPid(t)
	t.Cleanup(func() { killAndWaitGone(t, child) }) // runs before the parent's cleanup
	// Wait for the tree to be the two: os/exec's first use in a process
	// forks a short-lived child of its own, to see whether clone can
	// return a pidfd.
	want := []int{min(parent, child), max(parent, child)}
	within(t, "the parent and its child in the tree", func() string {
		tree, err := Tree(parent)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(tree, want) {
			return fmt.Sprintf("Tree(%d) = %v, want %v", parent, tree, want)
		}
		return ""
	})
	if got := ppid(t, child); got != parent {
		t.Errorf("the child's ppid is %d, want %d", got, parent)
	}
	settle(t, want, time.Second)
}

// killAndWaitGone kills pid and waits until it is gone.
func killAndWaitGone(t *testing.T, pid int) {
	syscall.Kill(pid, syscall.SIGKILL)
	waitGone(t, pid)
}

// waitGone waits until Tree says pid is gone: reaped, or a zombie (its
// first thread exited, and no other left).
func waitGone(t *testing.T, pid int) {
	within(t, fmt.Sprintf("process %d gone", pid), func() string {
		tree, err := Tree(pid)
		if !errors.Is(err, ErrGone) {
			return fmt.Sprintf("Tree = %v, %v", tree, err)
		}
		return ""
	})
}

func ppid(t *testing.T, pid int) int {
	st, ok, err := host.stat(strconv.Itoa(pid), "stat")
	if !ok || err != nil {
		t.Fatalf("stat of %d: %v, %v", pid, ok, err)
	}
	return st.ppid
}

func TestTreeOfExited(t *testing.T) {
	t.Parallel()
	h := startHelper(t, "stdin")
	pid := h.pid
	h.stdin.Close() // it reads EOF and exits; until reaped it is a zombie
	waitGone(t, pid)
	tree, err := Tree(pid)
	if !errors.Is(err, ErrGone) || !strings.Contains(err.Error(), strconv.Itoa(pid)) {
		t.Errorf("Tree(%d) = %v, %v; want an error naming it and wrapping ErrGone", pid, tree, err)
	}
	s := look(t, []int{pid}) // the zombie's one thread, which will not run again
	if why := Busy(s, s, time.Second); why != "" {
		t.Errorf("the zombie %s is busy: %s", describe(s), why)
	}
	t.Logf("zombie: %s", describe(s))
}

func TestTreeOfNoProcess(t *testing.T) {
	tree, err := Tree(1 << 30) // above the kernel's largest pid
	if !errors.Is(err, ErrGone) {
		t.Errorf("Tree(1<<30) = %v, %v; want ErrGone", tree, err)
	}
}

func TestLookSelf(t *testing.T) {
	s := look(t, []int{os.Getpid()})
	// The thread reading is on a CPU, but its syscall file shows the read
	// it is in (0 on amd64), not "running": the kernel reports a thread's
	// own system call.
	if !slices.ContainsFunc(s.Threads, func(th Thread) bool { return th.State == 'R' }) {
		t.Errorf("no thread of this process running: %s", describe(s))
	}
	if !slices.IsSortedFunc(s.Threads, func(x, y Thread) int { return x.TID - y.TID }) {
		t.Errorf("threads not in order: %s", describe(s))
	}
}

// TestSocket finds a helper's connection to a listener of this test by its
// addresses, its owner, and the bytes it has not read. The accepted
// connection's remote address is the helper's local address.
func TestSocket(t *testing.T) {
	for _, tc := range []struct {
		name, listen string
		dial         func(net.Addr) string
	}{
		{"IPv4", "127.0.0.1:0", net.Addr.String},
		{"IPv6", "[::1]:0", net.Addr.String},
		{"IPv4 to a dual-stack listener", "[::]:0", func(a net.Addr) string {
			return net.JoinHostPort("127.0.0.1", strconv.Itoa(a.(*net.TCPAddr).Port))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ln, err := net.Listen("tcp", tc.listen)
			if err != nil {
				t.Skipf("no %s here: %v", tc.listen, err)
			}
			t.Cleanup(func() { ln.Close() })
			pid := startHelper(t, "dial", dialEnv+"="+tc.dial(ln.Addr())).pid
			conn := accept(t, ln.(*net.TCPListener))
			ours, theirs := addrPort(conn.LocalAddr()), addrPort(conn.RemoteAddr())

			s := socketOf(t, theirs, ours)
			if s.State != Established || s.RxQueue != 0 || s.Inode == 0 {
				t.Errorf("the helper's socket = %+v, want ESTABLISHED with nothing queued", s)
			}
			mine := socketOf(t, ours, theirs)
			owners, err := Owners([]uint64{s.Inode, mine.Inode})
			if err != nil || !slices.Equal(owners[s.Inode], []int{pid}) {
				t.Errorf("Owners = %v, %v; want the helper's socket %d held by %d alone", owners, err, s.Inode, pid)
			}
			// This process's socket may also be held for a moment by a helper
			// another test is starting: a child holds all its parent's
			// descriptors from fork until exec closes them.
			if !slices.Contains(owners[mine.Inode], os.Getpid()) {
				t.Errorf("Owners = %v; want this process, %d, to hold its socket %d", owners, os.Getpid(), mine.Inode)
			}

			if _, err := conn.Write(make([]byte, 1000)); err != nil {
				t.Fatal(err)
			}
			within(t, "1000 bytes queued for the helper", func() string {
				if s := socketOf(t, theirs, ours); s.RxQueue != 1000 {
					return fmt.Sprintf("%+v", s)
				}
				return ""
			})
		})
	}
}

func accept(t *testing.T, ln *net.TCPListener) net.Conn {
	t.Helper()
	deadline, _ := testdeadline.Deadline(t) // none with -timeout 0
	ln.SetDeadline(deadline)
	conn, err := ln.Accept()
	if err != nil {
		t.Fatalf("accept the helper: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func addrPort(a net.Addr) netip.AddrPort { return a.(*net.TCPAddr).AddrPort() }

func socketOf(t *testing.T, local, remote netip.AddrPort) Sock {
	t.Helper()
	s, ok, err := Socket(local, remote)
	if !ok || err != nil {
		t.Fatalf("Socket(%v, %v) = %+v, %v, %v", local, remote, s, ok, err)
	}
	return s
}
