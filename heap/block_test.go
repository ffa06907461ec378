package heap_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"

	. "github.com/cachelab/cachelab/internal/difftest"
)

// popper is a goroutine blocked (or not) in Pop. Inside a synctest
// bubble, synctest.Wait returns once every goroutine is blocked for good,
// a Pop waiting on its sync.Cond included, so "has this Pop returned?" is
// a question with one answer, asked without sleeping.
type popper struct {
	name string
	done chan string
}

func startPop(h heapAPI, name string) *popper {
	p := &popper{name: name, done: make(chan string, 1)}
	go func() {
		obj, err := h.Pop()
		if err != nil {
			p.done <- "error: " + err.Error()
			return
		}
		p.done <- fmt.Sprint(obj)
	}()
	return p
}

// poll reports what the Pop returned, or "waiting". Call it after
// synctest.Wait.
func (p *popper) poll() string {
	select {
	case got := <-p.done:
		return got
	default:
		return "waiting"
	}
}

// blockStep is one step of a blocking script: start a Pop, act on the
// heap, or, with neither, settle and look at every Pop still unread.
type blockStep struct {
	start string                // start a Pop with this name
	act   func(h heapAPI) error // an add, a Close...
	label string                // what act does, for the transcript
}

func startP(name string) blockStep { return blockStep{start: name} }
func do(label string, act func(h heapAPI) error) blockStep {
	return blockStep{act: act, label: label}
}

// runBlocking runs steps on one heap in a synctest bubble: after every
// step it waits until every goroutine is blocked, then writes down each
// Pop that has returned since (and what it returned). Pops still waiting
// at the end are released by Close, and written down as such.
func runBlocking(t *testing.T, h heapAPI, steps []blockStep) []string {
	t.Helper()
	var trace []string
	synctest.Test(t, func(t *testing.T) {
		var pops []*popper
		settle := func() {
			synctest.Wait()
			for _, p := range pops {
				if got := p.poll(); got != "waiting" {
					trace = append(trace, "  "+p.name+" → "+got)
				}
			}
		}
		for _, s := range steps {
			if s.start != "" {
				pops = append(pops, startPop(h, s.start))
				trace = append(trace, "start "+s.start)
			} else {
				line := s.label
				if err := s.act(h); err != nil {
					line += " → error: " + err.Error()
				}
				trace = append(trace, line)
			}
			settle()
		}
		h.Close()
		trace = append(trace, "(end) close")
		settle()
	})
	return trace
}

// runBoth runs steps on cachelab's and client-go's heap and compares the
// transcripts, then compares cachelab's with want.
func runBoth(t *testing.T, steps []blockStep, want ...string) {
	t.Helper()
	cl, cg := newHeaps("prio")
	a, b := runBlocking(t, cl, steps), runBlocking(t, cg, steps)
	if d := cmp.Diff(b, a); d != "" {
		t.Fatalf("divergence from client-go (-client-go +cachelab):\n%s", d)
	}
	if d := cmp.Diff(want, a); d != "" {
		t.Errorf("transcript (-want +got):\n%s\ngot:\n\t%s", d, strings.Join(a, "\n\t"))
	}
}

func addJ(name string, prio int) blockStep {
	return do(fmt.Sprintf("add %s:%d", name, prio), func(h heapAPI) error { return h.Add(j(name, prio)) })
}

// client-go: heap.go Pop, Add, Close (B4, B5)
func TestPopWaits(t *testing.T) {
	t.Run("until an add", func(t *testing.T) {
		runBoth(t, []blockStep{startP("p1"), addJ("a", 1)},
			"start p1",
			"add a:1",
			"  p1 → a:1",
			"(end) close",
		)
	})
	t.Run("until Close, every one of them", func(t *testing.T) {
		runBoth(t, []blockStep{startP("p1"), startP("p2"), do("close", func(h heapAPI) error { h.Close(); return nil })},
			"start p1",
			"start p2",
			"close",
			"  p1 → error: heap is closed",
			"  p2 → error: heap is closed",
			"(end) close",
		)
	})
	t.Run("one add serves one of two waiting pops", func(t *testing.T) {
		// Both wake; whichever gets the lock first pops a, the other
		// finds the heap empty and waits again. Which one it is is a
		// race in client-go too, so the test only counts.
		cl, cg := newHeaps("prio")
		for _, h := range []heapAPI{cl, cg} {
			synctest.Test(t, func(t *testing.T) {
				p1, p2 := startPop(h, "p1"), startPop(h, "p2")
				synctest.Wait()
				_ = h.Add(j("a", 1))
				synctest.Wait()
				got := []string{p1.poll(), p2.poll()}
				if returned := slices.DeleteFunc(slices.Clone(got), func(s string) bool { return s == "waiting" }); !slices.Equal(returned, []string{"a:1"}) {
					t.Errorf("%T: after one add, pops returned %q, want exactly one a:1", h, got)
				}
				h.Close()
				synctest.Wait()
				for _, p := range []*popper{p1, p2} {
					if got := p.poll(); got != "waiting" && got != "error: heap is closed" {
						t.Errorf("%T: after Close, %s returned %q", h, p.name, got)
					}
				}
			})
		}
	})
}

// client-go: heap.go BulkAdd, AddIfNotPresent, Delete (B4, B6). A
// BulkAdd that stops at an object it cannot key keeps what it added but
// wakes nobody: the waiting Pop sleeps beside the objects, which shows
// which later calls wake it. Delete and reads do not; an empty BulkAdd
// and an AddIfNotPresent that stores nothing do.
func TestWhichCallsWakePop(t *testing.T) {
	badBulk := func(objs ...any) blockStep {
		return do(fmt.Sprintf("bulkadd %v", objs), func(h heapAPI) error { return h.BulkAdd(objs) })
	}
	runBoth(t, []blockStep{
		startP("p1"),
		badBulk(j("a", 1), j("b", 2), Bad(9)),
		do("delete b:2", func(h heapAPI) error { return h.Delete(j("b", 2)) }),
		do("get a:1", func(h heapAPI) error { _, _, err := h.Get(j("a", 1)); return err }),
		do("list", func(h heapAPI) error { h.List(); h.ListKeys(); return nil }),
		do("bulkadd []", func(h heapAPI) error { return h.BulkAdd(nil) }),
		startP("p2"),
		badBulk(j("c", 3), Bad(9)),
		do("addifnotpresent c:0", func(h heapAPI) error { return h.AddIfNotPresent(j("c", 0)) }),
	},
		"start p1",
		"bulkadd [a:1 b:2 {9}] → error: couldn't create key for object {ID:9}: not a job: {9}",
		"delete b:2",
		"get a:1",
		"list",
		"bulkadd []",
		"  p1 → a:1",
		"start p2",
		"bulkadd [c:3 {9}] → error: couldn't create key for object {ID:9}: not a job: {9}",
		"addifnotpresent c:0",
		"  p2 → c:3",
		"(end) close",
	)
}

// client-go: heap.go AddIfNotPresent, Pop (B4): a write broadcasts, it
// does not signal one waiter. Two Pops wait beside two objects that a
// failed BulkAdd left unannounced; one AddIfNotPresent that stores nothing
// wakes both, and both pop. Which Pop gets which object is a race, in
// client-go too, so the objects popped are compared as a set.
func TestAWriteWakesEveryWaitingPop(t *testing.T) {
	cl, cg := newHeaps("prio")
	for _, h := range []heapAPI{cl, cg} {
		synctest.Test(t, func(t *testing.T) {
			p1, p2 := startPop(h, "p1"), startPop(h, "p2")
			synctest.Wait()
			if err := h.BulkAdd([]any{j("a", 1), j("b", 2), Bad(9)}); err == nil {
				t.Fatalf("%T: BulkAdd of an unkeyable object succeeded", h)
			}
			synctest.Wait()
			if got := []string{p1.poll(), p2.poll()}; !slices.Equal(got, []string{"waiting", "waiting"}) {
				t.Fatalf("%T: after the failed BulkAdd, pops returned %q, want both waiting", h, got)
			}
			_ = h.AddIfNotPresent(j("a", 0))
			synctest.Wait()
			got := []string{p1.poll(), p2.poll()}
			slices.Sort(got)
			if !slices.Equal(got, []string{"a:1", "b:2"}) {
				t.Errorf("%T: after one AddIfNotPresent, pops returned %q, want a:1 and b:2", h, got)
			}
			h.Close()
		})
	}
}

// client-go: heap.go Pop after Close (B5): a closed heap is drained, and
// only then does Pop fail.
func TestClosedHeapDrains(t *testing.T) {
	runBoth(t, []blockStep{
		addJ("a", 2), addJ("b", 1),
		do("close", func(h heapAPI) error { h.Close(); return nil }),
		startP("p1"), startP("p2"), startP("p3"),
	},
		"add a:2",
		"add b:1",
		"close",
		"start p1",
		"  p1 → b:1",
		"start p2",
		"  p2 → a:2",
		"start p3",
		"  p3 → error: heap is closed",
		"(end) close",
	)
}
