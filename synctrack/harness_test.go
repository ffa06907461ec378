package synctrack_test

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	cgsynctrack "k8s.io/client-go/tools/cache/synctrack"

	"github.com/cachelab/cachelab/internal/goroutines"
	"github.com/cachelab/cachelab/internal/testdeadline"
	"github.com/cachelab/cachelab/synctrack"
)

// lazy is one side's Lazy[int]: cachelab's or client-go's, the same
// three things a caller can do with either.
type lazy struct {
	get         func() (int, error)
	notify      func()
	setEvaluate func(func() (int, error))
}

func cachelabLazy() lazy {
	z := &synctrack.Lazy[int]{}
	return lazy{z.Get, z.Notify, func(f func() (int, error)) { z.Evaluate = f }}
}

func clientGoLazy() lazy {
	z := &cgsynctrack.Lazy[int]{}
	return lazy{z.Get, z.Notify, func(f func() (int, error)) { z.Evaluate = f }}
}

// story is a script told to one side; it returns its transcript.
type story func(t *testing.T, z lazy) []string

// same tells the story to cachelab's Lazy and to client-go's, and fails
// unless both transcripts are want.
func same(t *testing.T, s story, want ...string) {
	t.Helper()
	cl, cg := s(t, cachelabLazy()), s(t, clientGoLazy())
	if d := cmp.Diff(cg, cl); d != "" {
		t.Errorf("cachelab and client-go differ (-client-go +cachelab):\n%s", d)
	}
	if d := cmp.Diff(want, cl); d != "" {
		t.Errorf("transcript (-want +got):\n%s\ngot:\n\t%s", d, strings.Join(cl, "\n\t"))
	}
}

// result renders what a Get returned.
func result(v int, err error) string {
	if err != nil {
		return "error " + err.Error()
	}
	return fmt.Sprint(v)
}

// evaluations is an Evaluate that counts its calls: the n-th call returns
// base+n, or the error queued for it by failNext. Calls can block: a call
// made while hold is armed waits, after telling started, until release.
type evaluations struct {
	mu      sync.Mutex
	base    int
	calls   int
	failing int
	held    chan struct{} // non-nil: the next call blocks on it
	started chan int      // the blocked call's number, when it has started
}

func newEvaluations(base int) *evaluations {
	return &evaluations{base: base, started: make(chan int, 1)}
}

// evaluate is the Evaluate function.
func (e *evaluations) evaluate() (int, error) {
	e.mu.Lock()
	e.calls++
	n, held, fail := e.calls, e.held, e.failing > 0
	e.held = nil
	if fail {
		e.failing--
	}
	e.mu.Unlock()
	if held != nil {
		e.started <- n
		<-held
	}
	if fail {
		return 0, fmt.Errorf("evaluation %d failed", n)
	}
	return e.base + n, nil
}

// failNext makes the next n evaluations fail.
func (e *evaluations) failNext(n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.failing += n
}

// hold makes the next evaluation block until the returned release is
// called.
func (e *evaluations) hold() (release func()) {
	ch := make(chan struct{})
	e.mu.Lock()
	defer e.mu.Unlock()
	e.held = ch
	return func() { close(ch) }
}

// count is how many times Evaluate has been called.
func (e *evaluations) count() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.calls
}

// getter is a Get running on a goroutine of its own: id is that
// goroutine's number in a stack dump, wait its result.
type getter struct {
	id   string
	done chan string
}

// goGet starts a Get on its own goroutine.
func goGet(z lazy) getter {
	ids := make(chan string)
	done := make(chan string, 1)
	go func() {
		ids <- goroutines.Current()
		done <- result(z.get())
	}()
	return getter{<-ids, done}
}

func (g getter) wait() string { return <-g.done }

// startedBy waits until g's Get has started an evaluation (held by
// hold), and says which; if g is seen parked on a lock instead, waiting
// for an evaluation of an older generation, it says that, so that the
// story fails instead of hanging.
func startedBy(t *testing.T, e *evaluations, g getter) string {
	t.Helper()
	deadline := testdeadline.Context(t)
	for {
		select {
		case n := <-e.started:
			return fmt.Sprint("evaluation ", n, " blocks")
		default:
		}
		if blockedOnLock(g.id) {
			return "the Get waits for an older evaluation"
		}
		if deadline.Err() != nil {
			t.Fatalf("goroutine %s neither evaluated nor waited on a lock", g.id)
		}
		runtime.Gosched()
	}
}

// getNow is a Get that must not wait for an evaluation in progress (it
// belongs to a newer generation): it returns the Get's result, or, if
// the Get is seen parked on a lock instead, says so and leaves it
// running (the story's release lets it finish), so that a Lazy that
// makes it wait fails the story instead of hanging it.
func getNow(t *testing.T, z lazy) string {
	t.Helper()
	g := goGet(z)
	deadline := testdeadline.Context(t)
	for {
		select {
		case r := <-g.done:
			return r
		default:
		}
		if blockedOnLock(g.id) {
			return "waits for the evaluation in progress"
		}
		if deadline.Err() != nil {
			t.Fatalf("goroutine %s neither returned nor waited on a lock", g.id)
		}
		runtime.Gosched()
	}
}

// waitForLock returns once g's goroutine is parked on a lock inside
// Get: the evaluation it waits for is then certain to have begun before
// it asked. This is a barrier on an observed state (the goroutine's
// state in a stack dump), not a guess at how long it takes; the test
// binary's deadline (package testdeadline) only guards against a hang.
func waitForLock(t *testing.T, g getter) {
	t.Helper()
	deadline := testdeadline.Context(t)
	for !blockedOnLock(g.id) {
		if deadline.Err() != nil {
			t.Fatalf("goroutine %s never waited on a lock in Get", g.id)
		}
		runtime.Gosched()
	}
}

// blockedOnLock reports whether goroutine id waits for a mutex (sync's
// Mutex or RWMutex, which client-go's Lazy uses) called from a Lazy's Get.
func blockedOnLock(id string) bool {
	for _, g := range goroutines.All() {
		if goroutines.ID(g) != id {
			continue
		}
		state := goroutines.State(g)
		return strings.HasPrefix(state, "sync.Mutex.") || strings.HasPrefix(state, "sync.RWMutex.")
	}
	return false
}
