package procstate

import (
	"strings"
	"testing"
	"time"
)

// thread builds an asleep thread of process 10 that has run 5 times for
// 5ms and is blocked in no epoll wait; the options change it.
func thread(tid int, opts ...func(*Thread)) Thread {
	t := Thread{PID: 10, TID: tid, Comm: "ctrl", State: 'S', Timeslices: 5, RunTime: 5 * time.Millisecond,
		Syscall: Syscall{Nr: 202}}
	for _, o := range opts {
		o(&t)
	}
	return t
}

func state(s byte) func(*Thread)           { return func(t *Thread) { t.State = s } }
func ran(slices uint64) func(*Thread)      { return func(t *Thread) { t.Timeslices += slices } }
func ranFor(d time.Duration) func(*Thread) { return func(t *Thread) { t.RunTime += d } }
func onCPU(t *Thread)                      { t.Syscall = Syscall{Running: true} }

func epoll(call string, timeout time.Duration, known bool) func(*Thread) {
	return func(t *Thread) { t.Syscall.Timer = Timer{call, timeout, known} }
}

func snap(threads ...Thread) Snapshot { return Snapshot{Threads: threads} }

func TestBusy(t *testing.T) {
	second := time.Second
	for _, tc := range []struct {
		name          string
		before, after Snapshot
		want          string // a part of Busy's sentence; "" for idle
	}{
		{"asleep, unchanged", snap(thread(10), thread(11)), snap(thread(10), thread(11)), ""},
		{"no threads", snap(), snap(), ""},
		{"running", snap(thread(10)), snap(thread(10, state('R'))), "thread 10 (ctrl) of process 10 is running or waiting for a CPU (state R)"},
		{"uninterruptible", snap(thread(10)), snap(thread(10, state('D'))), "uninterruptible wait (state D)"},
		{"stopped", snap(thread(10)), snap(thread(10, state('T'))), "is stopped (state T)"},
		{"traced", snap(thread(10)), snap(thread(10, state('t'))), "is stopped (state t)"},
		{"idle kernel state", snap(thread(10)), snap(thread(10, state('I'))), `state 'I', which is not asleep`},
		{"started", snap(thread(10)), snap(thread(10), thread(12)), "thread 12 (ctrl) of process 10 started between the looks"},
		{"exited", snap(thread(10), thread(12)), snap(thread(10)), "thread 12 (ctrl) of process 10 exited between the looks"},
		{"scheduled", snap(thread(10)), snap(thread(10, ran(2))), "ran between the looks (scheduled twice)"},
		{"ran on", snap(thread(10)), snap(thread(10, ranFor(time.Millisecond))), "ran between the looks (for 1ms)"},
		{"on a CPU though asleep", snap(thread(10)), snap(thread(10, onCPU)), "was on a CPU when its system call was read"},
		{"a zombie", snap(thread(10, state('Z'))), snap(thread(10, state('Z'))), ""},
		{"a new zombie", snap(), snap(thread(10, state('Z'))), "started between the looks"},
		{"timer within the horizon", snap(thread(10)), snap(thread(10, epoll("epoll_pwait", 49*time.Millisecond, true))),
			"waits on a timer due within 49ms (epoll_pwait with a timeout of 49ms)"},
		{"timer at the horizon", snap(thread(10)), snap(thread(10, epoll("epoll_wait", second, true))), "due within 1s"},
		{"zero timeout", snap(thread(10)), snap(thread(10, epoll("epoll_wait", 0, true))), "due within 0s"},
		{"timer past the horizon", snap(thread(10)), snap(thread(10, epoll("epoll_wait", second+time.Millisecond, true))), ""},
		{"no timeout", snap(thread(10)), snap(thread(10, epoll("epoll_pwait", -1, true))), ""},
		{"unreadable timeout", snap(thread(10)), snap(thread(10, epoll("epoll_pwait2", 0, false))),
			"waits in epoll_pwait2 with a timeout this package cannot read"},
		{"another process, same tid", snap(thread(10)), snap(Thread{PID: 11, TID: 10, Comm: "x", State: 'S', Timeslices: 5,
			RunTime: 5 * time.Millisecond}), "thread 10 (ctrl) of process 10 exited between the looks; thread 10 (x) of process 11 started"},
		{"many", snap(thread(10), thread(11), thread(12), thread(13), thread(14)),
			snap(thread(10, state('R')), thread(11, state('R')), thread(12, state('R')), thread(13, state('R')), thread(14)),
			"; and 1 more thread is busy."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Busy(tc.before, tc.after, second)
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("Busy = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestBusyOrder checks that the sentence names threads in order of (PID,
// TID), whatever order the snapshots hold them in.
func TestBusyOrder(t *testing.T) {
	other := thread(3, state('R')) // new, but its state is the first reason
	other.PID = 9
	got := Busy(snap(thread(12), thread(11)), snap(thread(11, state('R')), other), time.Second)
	want := "thread 3 (ctrl) of process 9 is running or waiting for a CPU (state R); " +
		"thread 11 (ctrl) of process 10 is running or waiting for a CPU (state R); " +
		"thread 12 (ctrl) of process 10 exited between the looks."
	if got != want {
		t.Errorf("Busy =\n%q\nwant\n%q", got, want)
	}
}
