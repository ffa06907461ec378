package procstate

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Busy compares two looks at the same processes, before and then after,
// and says why they are not idle, or "" if they are. A thread is busy when,
// in after, it
//
//   - is not asleep: running or runnable (R), in an uninterruptible wait
//     (D), stopped (T or t), or in any state other than S;
//   - was not in before (it was created between the looks), or was in
//     before and is not in after (it exited);
//   - was scheduled, or ran, between the looks: its Timeslices or RunTime
//     changed;
//   - was on a CPU when its system call was read, though its state said S;
//   - waits in a call that times out (see Timer) with a timeout t where
//     0 <= t <= horizon: a timer is due within the horizon. A longer
//     timeout, or none, is idle; a timeout that could not be read
//     (epoll_pwait2's, or a nanosleep's) is busy, since idle is only said
//     when it is shown.
//
// A thread that has exited and waits to be reaped (Z, or X) will not run
// again and is not busy, unless it exited between the looks.
//
// The answer is one sentence naming the first three busy threads, in order
// of (PID, TID), and what each did. Busy reads nothing from /proc, and
// works on any system.
func Busy(before, after Snapshot, horizon time.Duration) string {
	prev := make(map[[2]int]Thread, len(before.Threads))
	for _, t := range before.Threads {
		prev[key(t)] = t
	}
	var reasons []reason
	for _, t := range after.Threads {
		b, seen := prev[key(t)]
		delete(prev, key(t))
		if why := whyBusy(b, seen, t, horizon); why != "" {
			reasons = append(reasons, reason{key(t), t.String() + " " + why})
		}
	}
	for k, t := range prev {
		reasons = append(reasons, reason{k, t.String() + " exited between the looks"})
	}
	return sentence(reasons)
}

// reason is why one thread is busy.
type reason struct {
	thread [2]int // PID, TID
	text   string
}

func key(t Thread) [2]int { return [2]int{t.PID, t.TID} }

// whyBusy is why thread a is busy, given b, the same thread in the earlier
// look if seen; "" when it is idle.
func whyBusy(b Thread, seen bool, a Thread, horizon time.Duration) string {
	if why := stateBusy(a.State); why != "" {
		return why
	}
	switch {
	case !seen:
		return "started between the looks"
	case a.Timeslices != b.Timeslices:
		return fmt.Sprintf("ran between the looks (scheduled %s)", times(int64(a.Timeslices-b.Timeslices)))
	case a.RunTime != b.RunTime:
		return fmt.Sprintf("ran between the looks (for %v)", a.RunTime-b.RunTime)
	case exited(a.State):
		return ""
	case a.Syscall.Running:
		return "was on a CPU when its system call was read"
	}
	return timerBusy(a.Syscall.Timer, horizon)
}

// stateBusy is why a thread in this state is busy; "" when the state is
// asleep or exited.
func stateBusy(state byte) string {
	switch {
	case state == 'S' || exited(state):
		return ""
	case state == 'R':
		return "is running or waiting for a CPU (state R)"
	case state == 'D':
		return "is in an uninterruptible wait (state D)"
	case state == 'T' || state == 't':
		return fmt.Sprintf("is stopped (state %c)", state)
	}
	return fmt.Sprintf("is in state %q, which is not asleep", state)
}

// timerBusy is why a timed wait makes its thread busy within horizon;
// "" when it does not.
func timerBusy(w Timer, horizon time.Duration) string {
	switch {
	case w.Call == "":
		return ""
	case !w.Known:
		return "waits in " + w.String()
	case w.Timeout >= 0 && w.Timeout <= horizon:
		return fmt.Sprintf("waits on a timer due within %v (%s)", w.Timeout, w)
	}
	return ""
}

// sentence joins the first three reasons, in order of thread, into one
// sentence.
func sentence(reasons []reason) string {
	if len(reasons) == 0 {
		return ""
	}
	slices.SortFunc(reasons, func(x, y reason) int {
		return cmp.Or(cmp.Compare(x.thread[0], y.thread[0]), cmp.Compare(x.thread[1], y.thread[1]))
	})
	var texts []string
	for _, r := range reasons[:min(3, len(reasons))] {
		texts = append(texts, r.text)
	}
	s := strings.Join(texts, "; ")
	switch more := len(reasons) - len(texts); {
	case more == 1:
		s += "; and 1 more thread is busy"
	case more > 1:
		s += fmt.Sprintf("; and %d more threads are busy", more)
	}
	return s + "."
}

// times is "once", "twice" or "n times".
func times(n int64) string {
	switch n {
	case 1:
		return "once"
	case 2:
		return "twice"
	}
	return fmt.Sprintf("%d times", n)
}
