package procstate_test

import (
	"fmt"
	"time"

	"github.com/cachelab/cachelab/internal/procstate"
)

// A controller whose event loop waits in epoll_pwait for a timer 49 ms
// away is busy within a one-second horizon, and idle within a 10 ms one.
// On a live process the two snapshots come from procstate.Look.
func ExampleBusy() {
	asleep := procstate.Thread{PID: 4700, TID: 4700, Comm: "ctrl", State: 'S', Timeslices: 7,
		Syscall: procstate.Syscall{Nr: 281, Timer: procstate.Timer{
			Call: "epoll_pwait", Timeout: 49 * time.Millisecond, Known: true}}}
	before := procstate.Snapshot{Threads: []procstate.Thread{asleep}}
	after := before

	fmt.Printf("%q\n", procstate.Busy(before, after, 10*time.Millisecond))
	fmt.Printf("%q\n", procstate.Busy(before, after, time.Second))

	asleep.Timeslices++ // it woke, ran and slept again between the looks
	after = procstate.Snapshot{Threads: []procstate.Thread{asleep}}
	fmt.Printf("%q\n", procstate.Busy(before, after, 10*time.Millisecond))
	// Output:
	// ""
	// "thread 4700 (ctrl) of process 4700 waits on a timer due within 49ms (epoll_pwait with a timeout of 49ms)."
	// "thread 4700 (ctrl) of process 4700 ran between the looks (scheduled once)."
}
