package workqueue_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	cgwq "k8s.io/client-go/util/workqueue"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/cachelab/cachelab/workqueue"
)

// The differential harness for queues. A script of operations runs against
// cachelab's queue and client-go's, in one testing/synctest bubble, on one
// FakeClock. After every operation synctest.Wait() is the barrier: it
// returns once every goroutine of both queues (workers blocked in Get, the
// delaying loops, a ShutDownWithDrain) is blocked again, so what each side
// did in that step is settled and can be compared exactly.
//
// What is compared, per step: every return value the driver sees (Len,
// ShuttingDown, NumRequeues), and every worker that returned from Get (the
// item, or shutdown) or a ShutDownWithDrain that returned. Which worker
// gets an item is compared too: Get waits on a sync.Cond, whose Signal
// wakes the longest waiter, and the barrier lets each worker start
// waiting in script order, so the worker is as determined as the item.
// Only the order in which several goroutines woken by one operation log
// their lines is not (a ShutDown's Broadcast): a step's asynchronous
// lines are sorted.
//
// Time: the FakeClock drives AddAfter; the token bucket reads time.Now
// (client-go's through golang.org/x/time/rate), which inside the bubble
// is the bubble's clock. A step moves both by the same amount, so the
// two clocks never disagree.

// queue is the surface both sides' rate-limiting queues share; a plain or
// delaying queue has part of it, and the script checks which.
type queue interface {
	Add(string)
	Len() int
	Get() (string, bool)
	Done(string)
	ShutDown()
	ShutDownWithDrain()
	ShuttingDown() bool
}

type delaying interface {
	queue
	AddAfter(string, time.Duration)
}

type rateLimiting interface {
	delaying
	AddRateLimited(string)
	Forget(string)
	NumRequeues(string) int
}

// kind is which of the three queues a script runs against.
type kind int

const (
	// anyKind runs a script against all three queues: what holds for the
	// plain queue holds for the two built on it.
	anyKind kind = iota
	plain
	delayingKind
	rateLimitingKind
)

var kindNames = map[kind]string{plain: "queue", delayingKind: "delaying", rateLimitingKind: "ratelimiting"}

// pair makes one queue of each side, both on clk; lim makes the limiters
// of a rate-limiting queue (nil: client-go's default one).
func pair(k kind, clk *clocktesting.FakeClock, lim *limSpec) (cachelab, clientgo queue) {
	switch k {
	case plain:
		return workqueue.New[string](), cgwq.NewTyped[string]()
	case delayingKind:
		return workqueue.NewDelaying[string](workqueue.Options{Clock: clk}),
			cgwq.NewTypedDelayingQueueWithConfig(cgwq.TypedDelayingQueueConfig[string]{Clock: clk})
	}
	ours, theirs := workqueue.DefaultControllerRateLimiter[string](), cgwq.DefaultTypedControllerRateLimiter[string]()
	if lim != nil {
		ours, theirs = lim.cachelab(), lim.clientgo()
	}
	return workqueue.NewRateLimiting(ours, workqueue.Options{Clock: clk}),
		cgwq.NewTypedRateLimitingQueueWithConfig(theirs, cgwq.TypedRateLimitingQueueConfig[string]{Clock: clk})
}

// op is one step of a script.
type op struct {
	name   string // add, after, limited, forget, requeues, len, down?, get, done, doneItem, step, down, drain
	item   string
	worker int
	d      time.Duration
}

func add(x string) op                    { return op{name: "add", item: x} }
func after(x string, d time.Duration) op { return op{name: "after", item: x, d: d} }
func limited(x string) op                { return op{name: "limited", item: x} }
func forget(x string) op                 { return op{name: "forget", item: x} }
func requeues(x string) op               { return op{name: "requeues", item: x} }
func length() op                         { return op{name: "len"} }
func shuttingDown() op                   { return op{name: "down?"} }
func get(w int) op                       { return op{name: "get", worker: w} }
func done(w int) op                      { return op{name: "done", worker: w} }
func doneItem(x string) op               { return op{name: "doneItem", item: x} }
func step(d time.Duration) op            { return op{name: "step", d: d} }
func shutDown() op                       { return op{name: "down"} }
func drain() op                          { return op{name: "drain"} }
func gets(ws ...int) []op                { return mapOps(ws, get) }
func dones(ws ...int) []op               { return mapOps(ws, done) }
func mapOps(ws []int, f func(int) op) (o []op) {
	for _, w := range ws {
		o = append(o, f(w))
	}
	return o
}

func (o op) String() string {
	switch o.name {
	case "get", "done":
		return fmt.Sprintf("%s w%d", o.name, o.worker)
	case "step":
		return "step " + o.d.String()
	case "after":
		return fmt.Sprintf("after %s %s", o.item, o.d)
	}
	return strings.TrimSpace(o.name + " " + o.item)
}

// side is one queue and the workers that use it.
type side struct {
	q queue

	mu       sync.Mutex
	async    []string       // lines from worker goroutines since the last step
	got      []int          // workers whose Get returned an item since the last step
	held     map[int]string // worker → the item it holds
	busy     map[int]bool   // worker → blocked in Get
	draining bool           // a ShutDownWithDrain has not returned
	wg       sync.WaitGroup // every goroutine the side started
}

func newSide(q queue) *side { return &side{q: q, held: map[int]string{}, busy: map[int]bool{}} }

// valid reports whether o can run on this side now; scripts may only
// contain valid operations, the fuzzer skips the others.
func (s *side) valid(o op) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, holds := s.held[o.worker]
	switch o.name {
	case "get":
		return !holds && !s.busy[o.worker]
	case "done":
		return holds
	case "drain":
		return !s.draining
	case "after", "step":
		_, ok := s.q.(delaying)
		return ok
	case "limited", "forget", "requeues":
		_, ok := s.q.(rateLimiting)
		return ok
	}
	return true
}

// do runs o and returns the line the driver sees at once, if any.
func (s *side) do(o op) string {
	switch o.name {
	case "add":
		s.q.Add(o.item)
	case "after":
		s.q.(delaying).AddAfter(o.item, o.d)
	case "limited":
		s.q.(rateLimiting).AddRateLimited(o.item)
	case "forget":
		s.q.(rateLimiting).Forget(o.item)
	case "requeues":
		return fmt.Sprint(s.q.(rateLimiting).NumRequeues(o.item))
	case "len":
		return fmt.Sprint(s.q.Len())
	case "down?":
		return fmt.Sprint(s.q.ShuttingDown())
	case "get":
		s.startGet(o.worker)
	case "done":
		s.mu.Lock()
		x := s.held[o.worker]
		delete(s.held, o.worker)
		s.mu.Unlock()
		s.q.Done(x)
	case "doneItem":
		s.q.Done(o.item)
	case "down":
		s.q.ShutDown()
	case "drain":
		s.startDrain()
	}
	return ""
}

// startGet makes worker w call Get in its own goroutine.
func (s *side) startGet(w int) {
	s.mu.Lock()
	s.busy[w] = true
	s.mu.Unlock()
	s.wg.Go(func() {
		x, shutdown := s.q.Get()
		s.mu.Lock()
		defer s.mu.Unlock()
		s.busy[w] = false
		if shutdown {
			s.async = append(s.async, fmt.Sprintf("w%d: shutdown", w))
			return
		}
		s.held[w] = x
		s.got = append(s.got, w)
	})
}

func (s *side) startDrain() {
	s.mu.Lock()
	s.draining = true
	s.mu.Unlock()
	s.wg.Go(func() {
		s.q.ShutDownWithDrain()
		s.mu.Lock()
		defer s.mu.Unlock()
		s.draining = false
		s.async = append(s.async, "drained")
	})
}

// takeAsync returns, sorted, the lines worker goroutines logged since the
// last call.
//
// When one step hands items to several waiting workers (a clock step that
// makes several delayed items due at once), which of them gets which
// item is a race for the queue's mutex, on either side: the woken workers
// and the items are determined, the pairing is not. So that case is one
// line, workers and items each sorted, and the items are re-dealt to the
// workers in that order; a worker is only a name for who holds an item,
// so later steps are unaffected.
func (s *side) takeAsync() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.async
	s.async = nil
	switch len(s.got) {
	case 0:
	case 1:
		w := s.got[0]
		out = append(out, fmt.Sprintf("w%d: got %s", w, s.held[w]))
	default:
		out = append(out, s.redeal())
	}
	s.got = nil
	slices.Sort(out)
	return out
}

// redeal pairs the workers in s.got with their items in sorted order.
func (s *side) redeal() string {
	ws := slices.Sorted(slices.Values(s.got))
	var xs, names []string
	for _, w := range ws {
		xs = append(xs, s.held[w])
		names = append(names, fmt.Sprintf("w%d", w))
	}
	slices.Sort(xs)
	for i, w := range ws {
		s.held[w] = xs[i]
	}
	return fmt.Sprintf("%s: got %s, one each", strings.Join(names, " "), strings.Join(xs, " "))
}

// finish ends every goroutine the side started: the held items are done
// (which ends a ShutDownWithDrain) and the queue is shut down (which ends
// the Gets and the delaying loop).
func (s *side) finish() {
	s.mu.Lock()
	held := s.held
	s.held = map[int]string{}
	s.mu.Unlock()
	for _, w := range slices.Sorted(maps.Keys(held)) {
		s.q.Done(held[w])
	}
	s.q.ShutDown()
	s.wg.Wait()
}

// script is one differential case.
type script struct {
	name   string
	covers string // REFERENCE.md IDs
	kind   kind
	lim    *limSpec
	ops    []op
	want   []string // the transcript both sides must produce; nil: not checked
}

// runScripts runs each script as a subtest.
func runScripts(t *testing.T, cases []script) {
	for _, sc := range cases {
		kinds := []kind{sc.kind}
		if sc.kind == anyKind {
			kinds = []kind{plain, delayingKind, rateLimitingKind}
		}
		for _, k := range kinds {
			t.Run(sc.name+"/"+kindNames[k], func(t *testing.T) {
				checkTranscript(t, sc.want, runScript(t, k, sc.lim, sc.ops, true))
			})
		}
	}
}

// runScript runs ops against both sides and fails at the first step where
// they differ; it returns the common transcript. strict makes an
// operation that cannot run a test error (scripts); otherwise it is
// skipped (fuzzing).
func runScript(t *testing.T, k kind, lim *limSpec, ops []op, strict bool) (transcript []string) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		clk := clocktesting.NewFakeClock(time.Now())
		ours, theirs := pair(k, clk, lim)
		a, b := newSide(ours), newSide(theirs)
		defer func() {
			b.finish()
			a.finish()
		}()
		for i, o := range ops {
			if !a.valid(o) || !b.valid(o) {
				if strict {
					t.Fatalf("step %d: %s cannot run now", i, o)
				}
				continue
			}
			if o.name == "step" {
				advance(o.d)
				clk.Step(o.d)
			}
			ga, gb := []string{a.do(o)}, []string{b.do(o)}
			synctest.Wait()
			ga, gb = append(ga, a.takeAsync()...), append(gb, b.takeAsync()...)
			if d := cmp.Diff(gb, ga); d != "" {
				t.Fatalf("step %d (%s): cachelab and client-go differ (-client-go +cachelab):\n%s", i, o, d)
			}
			line := o.String()
			if ga[0] != "" {
				line += " → " + ga[0]
			}
			transcript = append(transcript, line)
			for _, l := range ga[1:] {
				transcript = append(transcript, "  "+l)
			}
		}
	})
	return transcript
}

// advance moves the bubble's own clock by d, the one time.Now reads. In a
// synctest bubble time moves only when every goroutine is blocked, so
// this takes no real time.
func advance(d time.Duration) {
	if d <= 0 {
		return
	}
	<-time.NewTimer(d).C
}

// checkTranscript compares a script's common transcript with the one its
// case states; a case without one (want nil) is proven by the
// differential comparison alone.
func checkTranscript(t *testing.T, want, got []string) {
	t.Helper()
	if want == nil {
		return
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("transcript (-want +got):\n%s\ngot:\n\t%s", d, strings.Join(got, "\n\t"))
	}
}
