package procstate

import (
	"cmp"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// procFS reads a /proc tree. The package's functions read the machine's;
// tests also read made-up ones in a temporary directory.
type procFS struct {
	root string // "/proc"
	arch string // whose system call table decodes timed waits: runtime.GOARCH
}

// tree is Tree for this /proc.
func (p procFS) tree(root int) ([]int, error) {
	parents, err := p.living()
	if err != nil {
		return nil, err
	}
	if _, ok := parents[root]; !ok {
		return nil, fmt.Errorf("%w: pid %d, the root of Tree", ErrGone, root)
	}
	children := make(map[int][]int)
	for pid, ppid := range parents {
		children[ppid] = append(children[ppid], pid)
	}
	out, seen := []int{root}, map[int]bool{root: true}
	for i := 0; i < len(out); i++ { // breadth first; seen guards against a reused pid making a loop
		for _, c := range children[out[i]] {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// living maps each living process to its parent, from every
// /proc/PID/stat. A process that exits while it is read, and a zombie,
// are left out.
func (p procFS) living() (map[int]int, error) {
	pids, err := p.pids()
	if err != nil {
		return nil, err
	}
	parents := make(map[int]int, len(pids))
	for _, pid := range pids {
		st, ok, err := p.stat(strconv.Itoa(pid), "stat")
		if err != nil {
			return nil, err
		}
		if ok && (!exited(st.state) || p.otherThreads(pid)) {
			parents[pid] = st.ppid
		}
	}
	return parents, nil
}

// exited reports whether a thread in this state has exited: a zombie (Z),
// or dead (X).
func exited(state byte) bool { return state == 'Z' || state == 'X' }

// otherThreads reports whether process pid has threads besides its first.
// A process's stat shows its first thread's state, which is Z when that
// thread has exited and others still run (a C program whose main calls
// pthread_exit, or any process as exit_group tears it down): it is a zombie
// only when its task directory holds that thread alone.
func (p procFS) otherThreads(pid int) bool {
	tids, err := p.numbered(p.path(strconv.Itoa(pid), "task"))
	return err == nil && len(tids) > 1
}

// pids lists the processes in /proc: its directories named by a number.
// (Threads other than a process's first have directories too, but they
// are not listed.)
func (p procFS) pids() ([]int, error) {
	return p.numbered(p.root)
}

// numbered reads the directory dir and returns the names that are
// numbers, in order; nil if dir is gone.
func (p procFS) numbered(dir string) ([]int, error) {
	entries, err := os.ReadDir(dir)
	if gone(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("procstate: %w", err)
	}
	var out []int
	for _, e := range entries {
		if n, err := strconv.Atoi(e.Name()); err == nil && n > 0 {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}

// stat reads and parses the stat file at path (under root); ok is false
// when its process or thread has gone.
func (p procFS) stat(path ...string) (st stat, ok bool, err error) {
	text, ok, err := p.read(path...)
	if !ok || err != nil {
		return stat{}, ok, err
	}
	st, err = parseStat(text)
	if err != nil {
		return stat{}, false, fmt.Errorf("procstate: %s: %w", p.path(path...), err)
	}
	return st, true, nil
}

// read reads the file at path under root; ok is false when it has gone
// with its process or thread.
func (p procFS) read(path ...string) (text string, ok bool, err error) {
	b, err := os.ReadFile(p.path(path...))
	if gone(err) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("procstate: %w", err) // the error names the file
	}
	return string(b), true, nil
}

func (p procFS) path(parts ...string) string {
	return filepath.Join(append([]string{p.root}, parts...)...)
}

// socket is Socket for this /proc.
func (p procFS) socket(local, remote netip.AddrPort) (Sock, bool, error) {
	local, remote = plain(local), plain(remote)
	var found Sock
	ok := false
	for _, file := range []string{"net/tcp", "net/tcp6"} {
		socks, err := p.sockets(file)
		if err != nil {
			return Sock{}, false, err
		}
		for _, s := range socks {
			if s.Local == local && s.Remote == remote && (!ok || found.Inode == 0) {
				found, ok = s, true // a held socket wins over one in TIME_WAIT with the same addresses
			}
		}
	}
	return found, ok, nil
}

// plain is a as /proc/net/tcp prints it: unmapped, with no zone.
func plain(a netip.AddrPort) netip.AddrPort {
	return netip.AddrPortFrom(a.Addr().Unmap().WithZone(""), a.Port())
}

// sockets reads every socket of a /proc/net/tcp file, after its header.
func (p procFS) sockets(file string) ([]Sock, error) {
	text, ok, err := p.read(file)
	if !ok || err != nil {
		return nil, err // no tcp6 on a kernel without IPv6
	}
	lines := strings.Split(strings.TrimSpace(text), "\n")
	socks := make([]Sock, 0, len(lines))
	for i, line := range lines[1:] {
		s, err := parseTCPLine(line)
		if err != nil {
			return nil, fmt.Errorf("procstate: %s line %d: %w", p.path(file), i+2, err)
		}
		socks = append(socks, s)
	}
	return socks, nil
}

// owners is Owners for this /proc.
func (p procFS) owners(inodes []uint64) (map[uint64][]int, error) {
	want := make(map[uint64]bool, len(inodes))
	for _, n := range inodes {
		want[n] = true
	}
	pids, err := p.pids()
	if err != nil {
		return nil, err
	}
	out := make(map[uint64][]int)
	for _, pid := range pids {
		for _, n := range p.heldSockets(pid) {
			if want[n] {
				out[n] = append(out[n], pid)
			}
		}
	}
	return out, nil
}

// heldSockets lists the inodes of the sockets process pid holds open, each
// once. A process that has gone, or whose descriptors this process may
// not read, holds none.
func (p procFS) heldSockets(pid int) []uint64 {
	dir := p.path(strconv.Itoa(pid), "fd")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []uint64
	for _, e := range entries {
		link, err := os.Readlink(filepath.Join(dir, e.Name()))
		if n, ok := socketInode(link); err == nil && ok {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// socketInode reads the inode of a descriptor's link, "socket:[4711]".
func socketInode(link string) (uint64, bool) {
	digits, ok := strings.CutPrefix(link, "socket:[")
	digits, ok2 := strings.CutSuffix(digits, "]")
	n, err := strconv.ParseUint(digits, 10, 64)
	return n, ok && ok2 && err == nil
}

// look is Look for this /proc.
func (p procFS) look(pids []int) (Snapshot, error) {
	var snap Snapshot
	for _, pid := range pids {
		threads, err := p.threads(pid)
		if err != nil {
			return Snapshot{}, err
		}
		snap.Threads = append(snap.Threads, threads...)
	}
	slices.SortFunc(snap.Threads, func(x, y Thread) int {
		return cmp.Or(cmp.Compare(x.PID, y.PID), cmp.Compare(x.TID, y.TID))
	})
	snap.Threads = slices.CompactFunc(snap.Threads, func(x, y Thread) bool { return key(x) == key(y) })
	return snap, nil
}

// threads reads every thread of process pid; none if it has gone.
func (p procFS) threads(pid int) ([]Thread, error) {
	tids, err := p.numbered(p.path(strconv.Itoa(pid), "task"))
	if err != nil {
		return nil, err
	}
	var out []Thread
	for _, tid := range tids {
		t, ok, err := p.thread(pid, tid)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, t)
		}
	}
	return out, nil
}

// thread reads one thread's stat, syscall and schedstat; ok is false when
// it exits before all three are read.
//
// The files are read one after another, and the thread may run between
// reads: its state and system call would then describe a later moment
// than its counters. So schedstat is read last. If the thread ran while
// the others were read, the counters have moved past those of any earlier
// look, and Busy calls it busy; if they have not moved, it did not run
// after that look, and what the other files say is still true.
func (p procFS) thread(pid, tid int) (t Thread, ok bool, err error) {
	dir := []string{strconv.Itoa(pid), "task", strconv.Itoa(tid)}
	st, ok, err := p.stat(append(dir, "stat")...)
	if !ok || err != nil {
		return Thread{}, false, err
	}
	t = Thread{PID: pid, TID: tid, Comm: st.comm, State: st.state}
	call, ok1, err1 := p.read(append(dir, "syscall")...)
	sched, ok2, err2 := p.read(append(dir, "schedstat")...)
	if err := cmp.Or(err1, err2); !ok1 || !ok2 || err != nil {
		return Thread{}, false, err
	}
	if t.Syscall, err = parseSyscall(call, p.arch); err != nil {
		return Thread{}, false, fmt.Errorf("procstate: %s: %w", p.path(append(dir, "syscall")...), err)
	}
	if t.Timeslices, t.RunTime, err = parseSchedstat(sched); err != nil {
		return Thread{}, false, fmt.Errorf("procstate: %s: %w", p.path(append(dir, "schedstat")...), err)
	}
	return t, true, nil
}
