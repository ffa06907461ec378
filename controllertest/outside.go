package controllertest

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cachelab/cachelab/internal/procstate"
)

// A controller in another process.
//
// The world's server also listens on loopback TCP (Options.Outside), and
// a kubeconfig (WriteKubeconfig) takes any client there, in any
// language, as ControllerUser. Its connections are relayed onto the
// world's network (package memnet), so the faults reach them as they
// reach an in-process controller's. What the world cannot do for such a
// controller is look at its goroutines and its queues. It looks at what
// the kernel knows instead (package procstate), and the controller is
// settled when:
//
//   - no byte is in either socket of any of its connections: it has read
//     everything the server sent, and the server everything it sent;
//   - every thread of its processes (those that hold its connections,
//     and those Command started, with their children) sleeps, and none
//     ran between this look and the one before;
//   - none of them waits in epoll for a timer due within
//     Outside.Horizon: a client-go or controller-runtime requeue after a
//     conflict (5 ms, doubling), a WaitForCacheSync poll (100 ms), a
//     client's rate limiter; after a retry (a request answered with an
//     error, or such a timer that fired and made requests), and with no
//     event held for it, none within four times the horizon: the
//     retry's next timer, which would otherwise fire in the middle of a
//     later step;
//   - and, unless its line is cut, every resource and namespace it has
//     watched in this world is watched again, by as many watches as when
//     the world last found it settled: after a disconnect, each
//     client-go reflector waits 0.8 to 1.6 s of its own clock before it
//     lists and watches again, a timer longer than the horizon that the
//     world waits out this way. A controller-runtime Manager with a
//     cluster.Cluster of its own has two informers of one resource: the
//     first to watch again is not the last.
//
// What it cannot see: a timer longer than the horizon other than a
// reflector's backoff (a RequeueAfter of seconds, an informer's resync
// period, a periodic ticker of the controller's own), which fires on the
// wall clock, maybe in the middle of a later step; and a thread waiting
// with a timeout in something other than epoll (a futex, a sleep). A
// verdict that rests on those can change with the machine's load. Nor
// can it tell apart two informers of one resource (kubeapiserver.Gate):
// which of them hears of an event first is, after a disconnect, which
// ended client-go's random backoff first, and a verdict that rests on
// that can change from run to run on a quiet machine.

// Outside says the world also serves controllers in other processes.
type Outside struct {
	// Horizon is how soon a timer of the controller's must be due for the
	// world to wait for it (250 ms if 0). See the comment above.
	Horizon time.Duration
	// Connect is how long the world waits for a controller it did not
	// start (Attach) to connect and watch (2 minutes if 0).
	Connect time.Duration
}

func (o *Outside) horizon() time.Duration { return cmp.Or(max(o.Horizon, 0), 250*time.Millisecond) }
func (o *Outside) connect() time.Duration { return cmp.Or(max(o.Connect, 0), 2*time.Minute) }

// outside is what the world knows of its controllers in other processes.
type outside struct {
	ln net.Listener

	mu      sync.Mutex
	started map[int]bool     // the processes Command started, still running
	watched map[string]int   // every resource/namespace ControllerUser has watched, with how many watches when it last settled (at least 1)
	owners  map[uint64][]int // the processes holding each socket, by inode
	pids    []int            // the processes looked at last
	last    procstate.Snapshot
	poll    pollSeen
	// retrying is set when a request of the controller's was answered
	// with an error, or a timer within the horizon fired and the
	// controller made requests: a requeue after an error, whose next
	// timer is twice as far (client-go's and controller-runtime's
	// default rate limiter: 5 ms, doubling). Such a chain outgrows the
	// horizon while the gate holds the event that would end it; the
	// world then lets the event go, and waits for the chain's last
	// timer, up to four times the horizon, before it calls the
	// controller settled. Without that wait the timer fires on the wall
	// clock in the middle of a later step, where the machine's load puts
	// it. It is cleared when no timer is that near. (The error is read
	// from the request log, which does not depend on when the world
	// looks; under load a look may not catch the controller between
	// two of a chain's timers.)
	retrying bool
	scanned  int // the controller's requests looked at for errors
	// attached is set by Attach: a controller the world did not start
	// is to connect, by connectBy.
	attached  bool
	connectBy time.Time
}

// pollSeen is what the settle saw of a timer within the horizon: the
// requests the server had taken when it was first seen, and whether the
// process ran since.
type pollSeen struct {
	armed, ran bool
	requests   int
}

// serveOutside opens the world's loopback listener for other processes.
func (w *World) serveOutside() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("controllertest: listening for controllers in other processes: %w", err)
	}
	w.outside = &outside{ln: ln, started: map[int]bool{}, watched: map[string]int{}, owners: map[uint64][]int{}}
	w.net.ServeTCP(ln, ControllerUser)
	return nil
}

// Address is where the world's server listens for controllers in other
// processes (Options.Outside), "" if it does not.
func (w *World) Address() string {
	if w.outside == nil {
		return ""
	}
	return w.outside.ln.Addr().String()
}

// WriteKubeconfig writes a kubeconfig for a controller in another
// process to path: the world's server at Address, as ControllerUser. It
// refuses to write over a file that is there, and the world needs
// Options.Outside.
func (w *World) WriteKubeconfig(path string) error {
	if w.outside == nil {
		return errors.New("controllertest: the world serves no controller in another process; start it with Options.Outside")
	}
	cc, err := w.server.Client(ControllerUser)
	if err != nil {
		return err
	}
	cc.Host = "https://" + w.Address()
	return cc.WriteKubeconfig(path, ControllerUser, "")
}

// CommandOptions say how Command runs a controller's process.
type CommandOptions struct {
	// Env is added to the process's environment, after KUBECONFIG.
	Env []string
	// Dir is the process's working directory ("" for the test's).
	Dir string
	// Output takes the process's standard output and error. Command
	// keeps their last 4 KiB for its error if the process ends early.
	Output io.Writer
	// Grace is how long a process has to end after SIGTERM before it is
	// killed (5 s if 0).
	Grace time.Duration
}

// Command is a controller in another process, for Explore.Controller or
// World.Run: args[0] is started with args[1:], with KUBECONFIG set to a
// kubeconfig of the world's (WriteKubeconfig) in a directory of its own,
// and with every "{kubeconfig}" in args replaced by its path. The process
// leads a process group of its own. When the controller stops (the
// story's stop, or Close), the group gets SIGTERM, then SIGKILL after
// CommandOptions.Grace; the kubeconfig is removed. A process that ends
// before that is a controller that returned: the next Settle says so,
// with the end of its output.
func Command(args []string, opts CommandOptions) func(ctx context.Context, w *World) error {
	return func(ctx context.Context, w *World) error {
		if len(args) == 0 {
			return errors.New("controllertest: Command needs a program to run")
		}
		dir, err := os.MkdirTemp("", "cachelab-controller-")
		if err != nil {
			return fmt.Errorf("controllertest: a directory for the controller's kubeconfig: %w", err)
		}
		defer os.RemoveAll(dir)
		kubeconfig := filepath.Join(dir, "kubeconfig")
		if err := w.WriteKubeconfig(kubeconfig); err != nil {
			return err
		}
		argv := make([]string, len(args))
		for i, a := range args {
			argv[i] = strings.ReplaceAll(a, "{kubeconfig}", kubeconfig)
		}
		tail := &lastBytes{max: 4096}
		out := io.Writer(tail)
		if opts.Output != nil {
			out = io.MultiWriter(opts.Output, tail)
		}
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = append(append(os.Environ(), "KUBECONFIG="+kubeconfig), opts.Env...)
		cmd.Dir, cmd.Stdout, cmd.Stderr = opts.Dir, out, out
		ownGroup(cmd)
		// The process is started and waited for on a goroutine without
		// the controller's label, with the goroutines os/exec starts to
		// copy its output: they wait in system calls, and the kernel's
		// view of the process is what the settle looks at (above).
		started, done := make(chan error, 1), make(chan error, 1)
		go func() {
			pprof.SetGoroutineLabels(context.Background())
			if err := cmd.Start(); err != nil {
				started <- err
				return
			}
			started <- nil
			done <- cmd.Wait()
		}()
		if err := <-started; err != nil {
			return fmt.Errorf("controllertest: starting the controller: %w", err)
		}
		pid := cmd.Process.Pid
		w.outside.start(pid)
		defer w.outside.end(pid)
		select {
		case err := <-done:
			return fmt.Errorf("%s ended (%v); the end of its output:\n%s", argv[0], err, tail)
		case <-ctx.Done():
		}
		signalGroup(pid, false)
		select {
		case <-done:
		case <-time.After(cmp.Or(max(opts.Grace, 0), 5*time.Second)):
			signalGroup(pid, true)
			<-done
		}
		signalGroup(pid, true) // what it started and left behind
		waitGroupGone(pid, 5*time.Second)
		return ctx.Err()
	}
}

// Attach is a controller in another process that the world does not
// start, for Explore.Controller or World.Run: one a person or a script
// starts with the kubeconfig it writes. The first settle waits for it to
// connect and watch (Outside.Connect); from then on the world knows its
// processes by the connections they hold. The story cannot stop and
// start it (the world did not start it, and cannot start it again).
func Attach(opts AttachOptions) func(ctx context.Context, w *World) error {
	return func(ctx context.Context, w *World) error {
		if w.outside == nil {
			return errors.New("controllertest: the world serves no controller in another process; start it with Options.Outside")
		}
		if opts.Kubeconfig != "" {
			if err := w.WriteKubeconfig(opts.Kubeconfig); err != nil {
				return err
			}
			defer os.Remove(opts.Kubeconfig)
		}
		w.outside.mu.Lock()
		w.outside.attached = true
		w.outside.mu.Unlock()
		if opts.Waiting != nil {
			opts.Waiting(w.Address())
		}
		<-ctx.Done()
		return ctx.Err()
	}
}

// AttachOptions say where Attach writes its kubeconfig, and whom it
// tells that it waits.
type AttachOptions struct {
	// Kubeconfig is where the kubeconfig is written (a new file, removed
	// when the controller stops), "" for none.
	Kubeconfig string
	// Waiting, if set, is called with the server's address once the
	// kubeconfig is written and the world waits for a controller.
	Waiting func(address string)
}

func (o *outside) isAttached() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.attached
}

func (o *outside) start(pid int) {
	o.mu.Lock()
	o.started[pid] = true
	o.mu.Unlock()
}

func (o *outside) end(pid int) {
	o.mu.Lock()
	delete(o.started, pid)
	o.mu.Unlock()
}

// outsideUnsettled says what the world waits for of its controllers in
// other processes (see the comment at the top), "" if nothing.
func (w *World) outsideUnsettled() (why string, wait waitKind, err error) {
	o := w.outside
	o.mu.Lock()
	defer o.mu.Unlock()
	var inodes []uint64
	for _, r := range w.net.Relays() {
		if r.Held {
			continue // the line is cut: what it sent waits for Restore
		}
		for _, ends := range [][2]netip.AddrPort{{r.Client, r.Server}, {r.Server, r.Client}} {
			s, ok, err := procstate.Socket(ends[0], ends[1])
			if err != nil {
				return "", none, fmt.Errorf("controllertest: the controller's connection from %v: %w", r.Client, err)
			}
			if !ok {
				continue // closed meanwhile
			}
			if s.RxQueue > 0 || s.TxQueue > 0 {
				return fmt.Sprintf("%d bytes in the socket %v of the connection from %v", s.RxQueue+s.TxQueue, ends[0], r.Client), none, nil
			}
			if ends[0] == r.Client {
				inodes = append(inodes, s.Inode)
			}
		}
	}
	pids, err := o.processes(inodes)
	if err != nil {
		return "", none, err
	}
	snap, err := procstate.Look(pids)
	if err != nil {
		return "", none, fmt.Errorf("controllertest: looking at the controller's processes %v: %w", pids, err)
	}
	last, lastPids := o.last, o.pids
	o.last, o.pids = snap, pids
	if !slices.Equal(pids, lastPids) {
		return fmt.Sprintf("the controller's processes %v, looked at once", pids), none, nil
	}
	horizon := w.opts.Outside.horizon()
	// After a retry, with no event held, the world waits for a timer
	// four times as far: the retry's next one (see retrying).
	reqs := w.server.Requests(ControllerUser)
	for _, q := range reqs[min(o.scanned, len(reqs)):] {
		if q.Status >= 400 {
			o.retrying = true // an error, which a controller requeues after
		}
	}
	o.scanned = len(reqs)
	retryWait := o.retrying && w.gate.Held() == 0
	if retryWait {
		horizon *= 4
	}
	if busy := procstate.Busy(last, snap, horizon); busy != "" {
		if procstate.Busy(last, snap, 0) != "" {
			o.poll.ran = true // it ran, or runs: not a timer alone
			return busy, none, nil
		}
		// Only a timer within the horizon. One that fires and makes no
		// request is a poll (a WaitForCacheSync's, every 100 ms): it
		// waits for something other than time, maybe an event the gate
		// holds. One that makes requests (a requeue's) was work: a retry.
		requests := w.requests()
		switch {
		case !o.poll.armed:
			o.poll = pollSeen{armed: true, requests: requests}
		case o.poll.requests != requests:
			o.poll = pollSeen{armed: true, requests: requests}
			o.retrying = true
		case o.poll.ran:
			o.retrying = false
			return busy + ", and made no request when it last fired: a poll", polling, nil
		}
		if retryWait && procstate.Busy(last, snap, w.opts.Outside.horizon()) == "" {
			return busy + ", after a retry", retryTimer, nil
		}
		return busy, shortTimer, nil
	}
	o.poll = pollSeen{}
	if retryWait || procstate.Busy(last, snap, 4*w.opts.Outside.horizon()) == "" {
		o.retrying = false // no retry's timer is near: the retries are over
	}
	open := w.server.OpenWatches(ControllerUser)
	for _, what := range open {
		o.watched[what] = max(o.watched[what], 1)
	}
	running := w.controllersRunning()
	if len(o.watched) == 0 && running {
		if o.attached {
			if o.connectBy.IsZero() {
				o.connectBy = time.Now().Add(w.opts.Outside.connect())
			}
			if time.Now().After(o.connectBy) {
				return "", none, fmt.Errorf("controllertest: no controller connected to %s and watched anything within %v", w.Address(), w.opts.Outside.connect())
			}
			return fmt.Sprintf("a controller to connect to %s", w.Address()), connecting, nil
		}
		return "the controller to open its first watch", backingOff, nil
	}
	if !running || w.net.IsCut(ControllerUser) {
		return "", none, nil // a controller stopped watches nothing; a cut line holds its dials
	}
	counts := map[string]int{}
	for _, what := range open {
		counts[what]++
	}
	for _, what := range slices.Sorted(maps.Keys(o.watched)) {
		switch n, want := counts[what], o.watched[what]; {
		case n == 0:
			return fmt.Sprintf("the controller to watch %s again", what), backingOff, nil
		case n < want:
			return fmt.Sprintf("the controller to watch %s again: %d of its %d watches are open", what, n, want), backingOff, nil
		}
	}
	maps.Copy(o.watched, counts)
	return "", none, nil
}

// processes are the controller's: those holding the sockets' inodes, and
// those Command started, with their descendants; sorted.
func (o *outside) processes(inodes []uint64) ([]int, error) {
	// Who holds a socket is looked up once (a look reads every
	// process's descriptors): a socket does not change hands here.
	var unknown []uint64
	for _, ino := range inodes {
		if _, ok := o.owners[ino]; !ok {
			unknown = append(unknown, ino)
		}
	}
	if len(unknown) > 0 {
		owners, err := procstate.Owners(unknown)
		if err != nil {
			return nil, fmt.Errorf("controllertest: who holds the controller's connections: %w", err)
		}
		for _, ino := range unknown {
			o.owners[ino] = owners[ino]
		}
	}
	var pids []int
	for _, ino := range inodes {
		pids = append(pids, o.owners[ino]...)
	}
	for pid := range o.started {
		tree, err := procstate.Tree(pid)
		if err != nil {
			continue // it ended; Command's wait says so
		}
		pids = append(pids, tree...)
	}
	slices.Sort(pids)
	return slices.Compact(pids), nil
}

// lastBytes keeps the last max bytes written to it.
type lastBytes struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (l *lastBytes) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b = append(l.b, p...)
	if over := len(l.b) - l.max; over > 0 {
		l.b = l.b[over:]
	}
	return len(p), nil
}

func (l *lastBytes) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(bytes.TrimSpace(l.b))
}
