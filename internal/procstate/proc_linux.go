//go:build linux

package procstate

import (
	"errors"
	"io/fs"
	"net/netip"
	"runtime"
	"syscall"
)

// host is this machine's /proc.
var host = procFS{root: "/proc", arch: runtime.GOARCH}

// Tree returns root and all its living descendants (children,
// grandchildren, ...), sorted, found from the ppid field of every
// /proc/PID/stat. A zombie is not living; a process whose first thread
// has exited while others run is. If root itself has gone, the error
// wraps ErrGone. It reads one file per process on the machine.
//
// The tree holds short-lived children too: a Go program's first use of
// os/exec forks one that exits at once, to learn whether clone returns a
// pidfd.
func Tree(root int) ([]int, error) { return host.tree(root) }

// Socket returns the TCP socket with these local and remote addresses, from
// /proc/net/tcp and /proc/net/tcp6; ok is false if there is none. The
// files list the sockets of this process's network namespace only. A
// socket some process holds is preferred to one in TIME_WAIT with the same
// addresses.
func Socket(local, remote netip.AddrPort) (s Sock, ok bool, err error) {
	return host.socket(local, remote)
}

// Owners returns, for each socket inode some process holds open, the
// processes that hold it, sorted; an inode no process holds is not in the
// map. It reads every /proc/PID/fd link on the machine. A process that
// exits while it is read, or whose descriptors this process may not read,
// is skipped. A child between fork and exec holds all its parent's
// descriptors, so a process that starts others may share its sockets with
// one for a moment.
func Owners(inodes []uint64) (map[uint64][]int, error) { return host.owners(inodes) }

// Look reads every thread of these processes: its state, how often and how
// long it has run, and the system call it is blocked in. The threads are
// sorted by (PID, TID). A thread, or a whole process, that exits while it
// is read is left out: compared with an earlier look, Busy sees it exit.
// Reading a thread's system call needs the right to ptrace its process.
func Look(pids []int) (Snapshot, error) { return host.look(pids) }

// gone reports whether err says a /proc file went away with its process
// or thread: it is no longer there, or the kernel says the task is gone.
func gone(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH)
}
