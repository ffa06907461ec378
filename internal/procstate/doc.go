// Package procstate tells, from Linux's /proc, whether a group of
// processes has nothing left to do: the question cachelab asks of a user's
// controller, a separate process in any language, before it calls a step
// of the simulation settled. It asks without a quiet period of the wall
// clock: every answer comes from what the kernel says about the processes
// now, and from comparing two such looks.
//
// Four looks, and what each proves:
//
//	Tree(root)             which processes: root and its living descendants
//	Socket(local, remote)  whether the controller has read every byte the
//	                       server sent it (RxQueue == 0)
//	Owners(inodes)         which process holds a socket, so the harness knows
//	                       the connection it watches is the controller's
//	Look(pids) twice       no thread is running, runnable or stopped; none
//	                       was scheduled between the two looks; none waits
//	                       for a timer due within the horizon
//	Busy(before, after, h) "" when all of the above hold, else why not
//
// A thread's state letter (from /proc/PID/task/TID/stat) says whether it is
// on a CPU or waiting for one (R), in an uninterruptible wait such as disk
// I/O (D), stopped (T, t), or asleep (S). A letter is true only at the
// instant it is read, so Look also records how many times each thread has
// been scheduled (the third field of /proc/PID/task/TID/schedstat) and its
// run time: if neither changed between two looks, the thread did not run in
// between, not even briefly. Threads that appear or vanish between the
// looks ran too (they were created or exited). A thread's files are read
// one after another, and it may run in between; its counters are read
// last, so that a thread that changed what it was doing while it was read
// shows as having run.
//
// A thread asleep now may wake by itself. /proc/PID/task/TID/syscall names
// the system call a sleeping thread is blocked in and its arguments, and
// Look decodes the timeout of epoll_wait and epoll_pwait (their fourth
// argument, in milliseconds): the call where an event loop (Go's netpoller,
// libuv, tokio, epoll-based Python) waits for its next timer. A wait due
// within the horizon given to Busy is busy; a longer one, or none, is idle.
//
// Look also marks a thread in nanosleep or clock_nanosleep as waiting on a
// timer of unknown length, and Busy, which only says idle when it can show
// it, calls it busy. Without that, every Go process would look idle for a
// moment after it worked: its sysmon thread polls with nanosleeps of up to
// 10 ms until all its goroutines are parked, and only then sleeps in a
// futex. A process that sleeps in nanosleep for a long time is busy until
// it wakes.
//
// What the looks cannot prove:
//
//   - A timer longer than the horizon. The process is idle now, and will wake
//     by itself later; Busy says idle because the caller asked about a horizon.
//   - When a timeout runs out. It counts from when the call was made, which
//     /proc does not say: a wait made with a 5 s timeout 4.9 s ago is due in
//     0.1 s, and Busy calls it idle within a 1 s horizon. (Go's netpoller
//     makes a new call whenever its next timer changes, so its timeout is
//     exact when the call is made.)
//   - Timed waits outside epoll and the sleeps. A futex with a timeout (Go's
//     sysmon sits in one for up to a minute once its process is idle; so
//     does a pthread_cond_timedwait), poll, ppoll, select and io_uring are
//     not decoded: a thread in any of them is taken as asleep until woken
//     from outside. A controller whose timers live there looks idle when it
//     is not.
//   - The timeout of epoll_pwait2, nanosleep and clock_nanosleep, which the
//     calls take as a pointer into the process's memory. Look reports it as
//     unknown, and Busy calls such a wait busy. (epoll_pwait2 with a nil
//     pointer has no timeout, and Look reports that.)
//   - Timers the kernel keeps for the process: a timerfd, timer_create,
//     alarm or setitimer. The thread sleeps with no timeout of its own, and
//     the kernel wakes it when the timer fires.
//   - Bytes in flight elsewhere: Socket sees one connection's queues; a
//     controller that also talks to something else over another socket,
//     a pipe or a file is idle by these looks while it waits there.
//
// The system call numbers are those of the machine running cachelab
// (amd64 and arm64 are decoded); a 32-bit process on a 64-bit kernel uses
// other numbers, and its timed waits are not decoded.
//
// Reading /proc/PID/task/TID/syscall needs the right to ptrace the process:
// cachelab's own children qualify, other users' processes do not. On other
// systems every function that reads /proc returns an error wrapping
// errors.ErrUnsupported.
//
// There is no client-go counterpart: client-go's tests wait on its own
// goroutines (see internal/goroutines for the in-process version of this
// question).
package procstate
