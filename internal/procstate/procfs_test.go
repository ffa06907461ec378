//go:build unix

package procstate

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// These tests read made-up /proc trees, to pin what the live tests in
// proc_linux_test.go cannot arrange: zombies, vanished threads, sockets
// in TIME_WAIT.

// fakeProc is a /proc tree in a temporary directory.
type fakeProc struct {
	t    *testing.T
	root string
}

func newFakeProc(t *testing.T) fakeProc {
	return fakeProc{t: t, root: t.TempDir()}
}

func (f fakeProc) fs() procFS { return procFS{root: f.root, arch: "amd64"} }

// file writes text at path under the root.
func (f fakeProc) file(path, text string) {
	f.t.Helper()
	full := filepath.Join(f.root, path)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(text), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// process writes process pid's stat.
func (f fakeProc) process(pid, ppid int, state byte, comm string) {
	f.file(fmt.Sprintf("%d/stat", pid), fmt.Sprintf("%d (%s) %c %d %d 0 0 -1 0\n", pid, comm, state, ppid, pid))
}

// link makes process pid's descriptor fd a link to target.
func (f fakeProc) link(pid, fd int, target string) {
	f.t.Helper()
	dir := filepath.Join(f.root, fmt.Sprint(pid), "fd")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(dir, fmt.Sprint(fd))); err != nil {
		f.t.Fatal(err)
	}
}

func TestFakeTree(t *testing.T) {
	f := newFakeProc(t)
	f.process(1, 0, 'S', "init")
	f.process(10, 1, 'S', "harness")
	f.process(11, 10, 'S', "ctrl")
	f.process(12, 11, 'R', "a) S 1 (b")
	f.process(13, 10, 'Z', "exited")
	f.process(14, 12, 'S', "grandchild")
	f.process(15, 10, 'Z', "main thread exited") // but its thread 16 lives
	f.task(15, 15, "15 (z) Z 10 15", "1 1 1\n", "-1 0x1 0x2\n")
	f.task(15, 16, "16 (z) S 10 15", "1 1 1\n", "202 0x1 0x0 0x0 0x0 0x0 0x0 0x1 0x2\n")
	f.task(13, 13, "13 (exited) Z 10 13", "1 1 1\n", "-1 0x1 0x2\n")
	f.process(20, 1, 'S', "other")
	f.file("self/stat", "garbage")
	f.file("net/tcp", "")
	for _, tc := range []struct {
		root int
		want []int
	}{
		{10, []int{10, 11, 12, 14, 15}},
		{12, []int{12, 14}},
		{20, []int{20}},
		{1, []int{1, 10, 11, 12, 14, 15, 20}},
	} {
		got, err := f.fs().tree(tc.root)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("tree(%d) = %v, %v; want %v", tc.root, got, err, tc.want)
		}
	}
	for _, root := range []int{13, 99} { // a zombie, and no process
		got, err := f.fs().tree(root)
		if !errors.Is(err, ErrGone) || !strings.Contains(err.Error(), fmt.Sprint(root)) {
			t.Errorf("tree(%d) = %v, %v; want an error naming it and wrapping ErrGone", root, got, err)
		}
	}
}

func TestFakeTreeBadStat(t *testing.T) {
	f := newFakeProc(t)
	f.process(1, 0, 'S', "init")
	f.file("7/stat", "7 no comm here")
	_, err := f.fs().tree(1)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(f.root, "7", "stat")) {
		t.Errorf("tree = %v, want an error naming 7/stat", err)
	}
}

func TestFakeOwners(t *testing.T) {
	f := newFakeProc(t)
	f.link(10, 0, "/dev/null")
	f.link(10, 3, "socket:[100]")
	f.link(10, 4, "socket:[100]") // a dup of 3
	f.link(10, 5, "socket:[200]")
	f.link(10, 6, "pipe:[100]")
	f.link(9, 3, "socket:[100]")
	f.process(12, 1, 'S', "no fd directory: it exited")
	got, err := f.fs().owners([]uint64{100, 300})
	want := map[uint64][]int{100: {9, 10}}
	if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("owners = %v, %v; want %v", got, err, want)
	}
}

func TestSocketInode(t *testing.T) {
	for link, want := range map[string]uint64{"socket:[4711]": 4711, "socket:[0]": 0} {
		if got, ok := socketInode(link); !ok || got != want {
			t.Errorf("socketInode(%q) = %d, %v; want %d", link, got, ok, want)
		}
	}
	for _, link := range []string{"", "socket:[]", "socket:[12", "pipe:[12]", "/dev/null", "socket:[-1]"} {
		if got, ok := socketInode(link); ok {
			t.Errorf("socketInode(%q) = %d, true; want false", link, got)
		}
	}
}

func TestFakeSocket(t *testing.T) {
	ctrl, server := netip.MustParseAddrPort("127.0.0.1:41234"), netip.MustParseAddrPort("127.0.0.1:6443")
	old := Sock{Local: ctrl, Remote: server, State: TimeWait}
	live := Sock{Local: ctrl, Remote: server, State: Established, RxQueue: 1000, Inode: 4711}
	// The server's side, accepted by an IPv6 listener: mapped addresses in tcp6.
	accepted := Sock{Local: server, Remote: ctrl, State: Established, TxQueue: 7, Inode: 4712}
	f := newFakeProc(t)
	header := "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
	f.file("net/tcp", header+kernelTCPLine(old, false)+"\n"+kernelTCPLine(live, false)+"\n")
	mapped := accepted
	mapped.Local = netip.AddrPortFrom(netip.AddrFrom16(server.Addr().As16()), server.Port())
	mapped.Remote = netip.AddrPortFrom(netip.AddrFrom16(ctrl.Addr().As16()), ctrl.Port())
	f.file("net/tcp6", header+kernelTCPLine(mapped, true)+"\n")

	for _, tc := range []struct {
		local, remote netip.AddrPort
		want          Sock
		ok            bool
	}{
		{ctrl, server, live, true},
		{server, ctrl, accepted, true},
		{mapped.Local, mapped.Remote, accepted, true}, // asked with mapped addresses
		{ctrl, netip.MustParseAddrPort("127.0.0.1:1"), Sock{}, false},
	} {
		got, ok, err := f.fs().socket(tc.local, tc.remote)
		if err != nil || ok != tc.ok || got != tc.want {
			t.Errorf("socket(%v, %v) = %+v, %v, %v; want %+v, %v", tc.local, tc.remote, got, ok, err, tc.want, tc.ok)
		}
	}
}

func TestFakeSocketBadLine(t *testing.T) {
	f := newFakeProc(t)
	f.file("net/tcp", "header\n   0: 0100007F:1F90 zz\n")
	_, _, err := f.fs().socket(netip.AddrPort{}, netip.AddrPort{})
	if err == nil || !strings.Contains(err.Error(), "net/tcp line 2") {
		t.Errorf("socket = %v, want an error naming net/tcp line 2", err)
	}
}

// task writes the three files Look reads for one thread.
func (f fakeProc) task(pid, tid int, stat, schedstat, syscall string) {
	dir := fmt.Sprintf("%d/task/%d/", pid, tid)
	for name, text := range map[string]string{"stat": stat, "schedstat": schedstat, "syscall": syscall} {
		if text != "" {
			f.file(dir+name, text)
		}
	}
}

func TestFakeLook(t *testing.T) {
	f := newFakeProc(t)
	f.task(10, 10, "10 (ctrl main) S 1 10", "5000 100 7\n",
		"281 0x5 0x7ffde8669ddc 0x80 0x36ee7f 0x0 0x0 0x7ffde8669d48 0x40816e\n")
	f.task(10, 12, "12 (ctrl) R 1 10", "9000 100 3\n", "running\n")
	f.task(10, 11, "11 (ctrl) S 1 10", "1 2 3\n", "") // exited before its syscall was read
	f.task(20, 20, "20 (other) D 1 20", "1 2 3\n", "-1 0x1 0x2\n")
	got, err := f.fs().look([]int{20, 10, 99, 10})
	want := Snapshot{Threads: []Thread{
		{PID: 10, TID: 10, Comm: "ctrl main", State: 'S', Timeslices: 7, RunTime: 5 * time.Microsecond,
			Syscall: Syscall{Nr: 281, Args: [6]uint64{5, 0x7ffde8669ddc, 0x80, 0x36ee7f, 0, 0},
				Timer: Timer{"epoll_pwait", 3599999 * time.Millisecond, true}}},
		{PID: 10, TID: 12, Comm: "ctrl", State: 'R', Timeslices: 3, RunTime: 9 * time.Microsecond,
			Syscall: Syscall{Running: true}},
		{PID: 20, TID: 20, Comm: "other", State: 'D', Timeslices: 3, RunTime: time.Nanosecond,
			Syscall: Syscall{Nr: -1}},
	}}
	if err != nil || fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
		t.Errorf("look =\n%+v, %v\nwant\n%+v", got, err, want)
	}
}

func TestFakeLookBadFile(t *testing.T) {
	f := newFakeProc(t)
	f.task(10, 10, "10 (ctrl) S 1 10", "5000 100\n", "running\n")
	_, err := f.fs().look([]int{10})
	if err == nil || !strings.Contains(err.Error(), filepath.Join("10", "task", "10", "schedstat")) {
		t.Errorf("look = %v, want an error naming the schedstat", err)
	}
}
