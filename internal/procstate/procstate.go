package procstate

import (
	"errors"
	"fmt"
	"net/netip"
	"time"
)

// ErrGone is returned when a process asked about by pid has exited: it is
// no longer in /proc, or only its zombie is left for its parent to reap.
var ErrGone = errors.New("procstate: process is gone")

// Sock is one TCP socket, as a line of /proc/net/tcp or /proc/net/tcp6
// shows it.
type Sock struct {
	Local, Remote netip.AddrPort // IPv4-mapped IPv6 addresses are unmapped
	State         TCPState
	// TxQueue is the bytes its owner wrote that the peer has not yet
	// acknowledged.
	TxQueue uint64
	// RxQueue is the bytes that arrived and its owner has not yet read.
	// (For a listening socket, the connections not yet accepted.)
	RxQueue uint64
	// Inode names the socket in its owners' /proc/PID/fd links
	// ("socket:[Inode]"). It is 0 for a socket no process holds, such as
	// one in TIME_WAIT.
	Inode uint64
}

// TCPState is a socket's state, the st column of /proc/net/tcp.
type TCPState uint8

// The states, numbered as include/net/tcp_states.h numbers them.
const (
	Established TCPState = 1 + iota
	SynSent
	SynRecv
	FinWait1
	FinWait2
	TimeWait
	Closed
	CloseWait
	LastAck
	Listen
	Closing
	NewSynRecv
)

var tcpStates = [...]string{"", "ESTABLISHED", "SYN_SENT", "SYN_RECV", "FIN_WAIT1",
	"FIN_WAIT2", "TIME_WAIT", "CLOSE", "CLOSE_WAIT", "LAST_ACK", "LISTEN", "CLOSING",
	"NEW_SYN_RECV"}

// String is the state's name as netstat prints it.
func (s TCPState) String() string {
	if int(s) < len(tcpStates) && s != 0 {
		return tcpStates[s]
	}
	return fmt.Sprintf("TCPState(%d)", uint8(s))
}

// Snapshot is one look at a group of processes: each of their threads, in
// order of (PID, TID).
type Snapshot struct {
	Threads []Thread
}

// Thread is what /proc said about one thread at one look.
type Thread struct {
	PID, TID int
	Comm     string // the thread's name, the comm field of its stat
	// State is the one-letter state of its stat: R running or runnable,
	// S asleep, D in an uninterruptible wait, T or t stopped, Z exited.
	State byte
	// Timeslices is how many times the thread has been put on a CPU, and
	// RunTime how long it has run there in all: two looks with the same
	// values show it did not run in between.
	Timeslices uint64
	RunTime    time.Duration
	Syscall    Syscall
}

// Syscall is what /proc/PID/task/TID/syscall said the thread was doing.
type Syscall struct {
	// Running is true when the thread was on a CPU as the file was read,
	// and nothing else is known.
	Running bool
	// Nr is the number of the system call the thread is blocked in, or -1
	// when it is blocked in the kernel outside one (a page fault, say).
	Nr   int
	Args [6]uint64
	// Timer is the decoded wait when the call ends by itself after a
	// timeout.
	Timer Timer
}

// Timer is a thread's wait in a system call that ends by itself when its
// timeout passes, if nothing ends it sooner: epoll_wait, epoll_pwait and
// epoll_pwait2, where an event loop waits for its next timer, and
// nanosleep and clock_nanosleep. Its zero value (Call == "") means the
// thread is in none of these calls.
type Timer struct {
	Call string // "epoll_wait", "nanosleep", ...
	// Timeout is how long the call waits, from when it was made; a
	// negative Timeout means it waits until an event arrives.
	Timeout time.Duration
	// Known is false when Timeout could not be read: epoll_pwait2 and the
	// sleeps take it as a pointer into the process's memory.
	Known bool
}

// String is the wait as Busy names it: "epoll_pwait with a timeout of 49ms".
func (w Timer) String() string {
	switch {
	case !w.Known:
		return w.Call + " with a timeout this package cannot read"
	case w.Timeout < 0:
		return w.Call + " with no timeout"
	}
	return fmt.Sprintf("%s with a timeout of %v", w.Call, w.Timeout)
}

// String names the thread as Busy's sentences do: "thread 12 (name) of
// process 10".
func (t Thread) String() string {
	return fmt.Sprintf("thread %d (%s) of process %d", t.TID, t.Comm, t.PID)
}
