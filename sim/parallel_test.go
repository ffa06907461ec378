package sim

import (
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cachelab/cachelab/informer"
	"github.com/cachelab/cachelab/sim/scenario"
)

// A scenario run mostly waits: on its settling, on client-go's relist
// backoff (real time), on etcd. So the tests that run the catalog run its
// scenarios side by side (t.Parallel), which takes the package's wall
// time from about the sum of the runs to about their sum divided by the
// runs at once, at little more CPU. Runs in one process may overlap only
// in one stack: client-go's feature gates are process-wide (claimProcess
// refuses the other), so each run waits at stacks until no run of the
// other stack is in progress. Settling does not depend on what else the
// machine runs (TestScenariosUnderLoad), and every trace is still held
// byte for byte to its file.
//
// The gate, not go test's -parallel, bounds the runs at once
// (testparallel.Gated): go test counts a test waiting at the gate as one
// of its -parallel places, and with four places three runs of one stack
// once waited through a long run of the other (219 s of places held in
// one run of the package, about a fifth of its parallel phase).

// stacks lets up to limit runs of one stack at a time through.
var stacks struct {
	sync.Mutex
	cond    *sync.Cond
	current informer.Stack
	running int
	limit   int // TestMain sets it (testparallel.Gated)
}

func init() { stacks.cond = sync.NewCond(&stacks.Mutex) }

// parallelIn marks t parallel and, once it runs, waits until it may run
// in stack: fewer than stacks.limit runs in progress, all in stack. The
// run's end lets the next in.
func parallelIn(t *testing.T, stack informer.Stack) {
	t.Helper()
	parallelRuns(t, stack, 1)
}

// parallelRuns is parallelIn for a test that makes n runs at once.
func parallelRuns(t *testing.T, stack informer.Stack, n int) {
	t.Helper()
	t.Parallel()
	stacks.Lock()
	for stacks.running > 0 && (stacks.running+n > stacks.limit || stacks.current != stack) {
		stacks.cond.Wait()
	}
	stacks.current = stack
	stacks.running += n
	stacks.Unlock()
	t.Cleanup(func() {
		stacks.Lock()
		stacks.running -= n
		stacks.Unlock()
		stacks.cond.Broadcast()
	})
}

// runsStack is the stack sc runs in with opts.
func runsStack(sc *scenario.Scenario, opts Options) informer.Stack {
	if opts.Stack != "" {
		return opts.Stack
	}
	return stackOf(sc)
}

// defaultParallel is how many runs overlap when go test's -parallel is
// not given (stacks.limit): runs wait far more than they compute, so
// more than the cores, but not so many that -race's memory and the runs'
// etcds crowd a 2-core machine. Side by side, runs once diverged when an
// etcd restarted (etcd-wipe, progress-after-restart): a busier machine
// more often let a watch reopen on a member that was stopping and get
// net/http's bare 200, which ended the watch of one side only. The
// embedded etcd's clients now read that answer as a crash
// (listwatch/crashed.go). At eight, one run over the wire still diverged
// once (watch-cache-consistent-read, client-go counted settled between
// its watch-list's 504 and its next request), not yet understood: so
// four, at which it has not been seen.
const defaultParallel = 4

// inStackOrder orders items by the stack each runs in (stable), so that
// parallel runs of one stack go together: the stack changes at the gate
// (stacks) only when every run in progress has ended.
func inStackOrder[T any](items []T, stack func(T) informer.Stack) []T {
	out := slices.Clone(items)
	slices.SortStableFunc(out, func(a, b T) int { return strings.Compare(string(stack(a)), string(stack(b))) })
	return out
}

// indices is 0, 1, ..., n-1.
func indices(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}
