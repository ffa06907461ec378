package scenarioclock

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// fakeClock is what both clocks offer.
type fakeClock interface {
	clock.WithTicker
	AfterFunc(time.Duration, func()) clock.Timer
	Step(time.Duration)
	Waiters() int
}

// side is one clock and the channels made on it, in the same order on
// both sides.
type side struct {
	c       fakeClock
	chans   []<-chan time.Time
	timers  []clock.Timer
	calls   []int // AfterFunc callbacks run, by number
	tickers []clock.Ticker
}

// do runs one operation, decoded from op and arg, and returns what it
// observed: every time received on any channel made so far (drained), the
// callbacks run, and how many waiters the clock has.
func (s *side) do(op, arg byte) []string {
	d := time.Duration(arg%16) * 250 * time.Millisecond
	switch op % 8 {
	case 0:
		s.chans = append(s.chans, s.c.After(d))
	case 1:
		t := s.c.NewTimer(d)
		s.timers = append(s.timers, t)
		s.chans = append(s.chans, t.C())
	case 2:
		n := len(s.calls)
		s.calls = append(s.calls, 0)
		t := s.c.AfterFunc(d, func() { s.calls[n]++ })
		s.timers = append(s.timers, t)
		s.chans = append(s.chans, t.C())
	case 3:
		if d > 0 {
			t := s.c.NewTicker(d)
			s.tickers = append(s.tickers, t)
			s.chans = append(s.chans, t.C())
		}
	case 4, 5:
		s.c.Step(d)
	case 6:
		if len(s.timers) > 0 {
			s.timers[int(arg)%len(s.timers)].Stop()
		}
	case 7:
		if len(s.timers) > 0 {
			s.timers[int(arg)%len(s.timers)].Reset(d)
		}
	}
	var seen []string
	for i, ch := range s.chans {
		select {
		case t := <-ch:
			seen = append(seen, time.Duration(i).String()+"@"+t.Sub(epoch).String())
		default:
		}
	}
	for i, n := range s.calls {
		if n > 0 {
			seen = append(seen, "callback "+time.Duration(i).String()+" ran "+time.Duration(n).String())
		}
	}
	return append(seen, "waiters "+time.Duration(s.c.Waiters()).String())
}

// The scenario's clock fires what k8s.io/utils' fake clock fires, when it
// fires it, for any sequence of Afters, timers, AfterFuncs, tickers,
// steps, stops and resets; and its waiters are the same.
func FuzzSameAsFakeClock(f *testing.F) {
	f.Add([]byte{1, 4, 4, 4, 5, 8, 7, 3, 4, 12})
	f.Add([]byte{3, 2, 3, 5, 4, 3, 4, 9, 0, 0, 4, 0, 6, 0, 4, 4})
	f.Add([]byte{2, 1, 7, 0, 4, 2, 7, 3, 4, 4, 6, 1, 4, 15})
	f.Fuzz(func(t *testing.T, script []byte) {
		ours := &side{c: New(epoch)}
		theirs := &side{c: clocktesting.NewFakeClock(epoch)}
		for i := 0; i+1 < len(script); i += 2 {
			op, arg := script[i], script[i+1]
			if op%8 == 7 && reArmsUnread(theirs, arg) {
				continue // FakeClock would block for ever on its second send (see below)
			}
			want, got := theirs.do(op, arg), ours.do(op, arg)
			if d := cmp.Diff(want, got); d != "" {
				t.Fatalf("after op %d (%d %d) (-FakeClock +scenarioclock):\n%s", i/2, op%8, arg, d)
			}
		}
	})
}

// reArmsUnread reports whether resetting the timer arg picks would re-arm
// one whose last tick is still in its channel: FakeClock's blocking send
// would then hang while it holds its lock. (The drain after every op
// empties channels, so this never happens in the script; the check keeps
// the fuzzer honest if that changes.)
func reArmsUnread(s *side, arg byte) bool {
	if len(s.timers) == 0 {
		return false
	}
	return len(s.timers[int(arg)%len(s.timers)].C()) > 0
}

// Next is the earliest due time of the waiters not excluded, through
// resets, and none once they have fired; a ticker stays due every period.
func TestNext(t *testing.T) {
	c := New(epoch)
	if _, ok := c.Next(); ok {
		t.Fatal("a new clock has a waiter due")
	}
	tick := c.NewTicker(time.Second) // a cache's bookmark timer, say
	c.Exclude(tick)
	if _, ok := c.Next(); ok {
		t.Fatal("an excluded ticker counts")
	}
	a := c.NewTimer(5 * time.Minute)
	b := c.After(90 * time.Second)
	next := func() time.Duration {
		t.Helper()
		at, ok := c.Next()
		if !ok {
			t.Fatal("nothing due")
		}
		return at.Sub(epoch)
	}
	if got := next(); got != 90*time.Second {
		t.Errorf("Next = %v, want 1m30s", got)
	}
	c.Step(90 * time.Second)
	<-b
	if got := next(); got != 5*time.Minute {
		t.Errorf("after the After fired, Next = %v, want 5m", got)
	}
	a.Reset(10 * time.Second)
	if got := next(); got != 100*time.Second {
		t.Errorf("after Reset(10s) at 1m30s, Next = %v, want 1m40s", got)
	}
	a.Stop()
	if _, ok := c.Next(); ok {
		t.Error("a stopped timer counts")
	}
	r := c.NewTicker(time.Minute)
	c.Step(150 * time.Second)
	<-r.C()
	if got := next(); got != 4*time.Minute+30*time.Second {
		t.Errorf("a ticker made at 1m30s, every minute, after 4m: Next = %v, want 4m30s", got)
	}
	r.Stop()
	if _, ok := c.Next(); ok {
		t.Error("a stopped ticker counts")
	}
}
