package explore

import (
	"context"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// A pool of 2 computing and 4 in all: a run that waits real time (a
// relist backoff) makes way for another while it waits, and counts again
// once its wait has passed; a run that ends makes way; never more than 4
// run, waiting or not.
func TestPoolLetsAnotherRunWhileOneWaits(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Unix(0, 0))
	p := newPool(2, 4, clk)
	ctx := context.Background()
	// Fatal at once: start would wait for good in a pool that is full.
	full := func(want bool, when string) {
		t.Helper()
		p.mu.Lock()
		defer p.mu.Unlock()
		if got := len(p.runs) >= p.most || p.computingLocked() >= p.computing; got != want {
			t.Fatalf("%s: full %v, want %v (%d runs, %d computing)", when, got, want, len(p.runs), p.computingLocked())
		}
	}
	a, b := p.start(ctx), p.start(ctx)
	full(true, "two runs computing")
	p.waits(a, time.Second)
	full(false, "one of two waits")
	c := p.start(ctx)
	full(true, "two computing, one waiting")
	clk.SetTime(clk.Now().Add(time.Second))
	full(true, "the wait has passed: three computing")
	p.end(b)
	full(true, "two computing")
	p.end(c)
	full(false, "one computing")

	d := p.start(ctx)
	p.waits(a, time.Minute)
	p.waits(d, time.Minute)
	full(false, "two runs, both waiting")
	e := p.start(ctx)
	p.waits(e, time.Minute)
	full(false, "three runs, all waiting")
	f := p.start(ctx)
	full(true, "four runs, three of them waiting")
	for _, r := range []*poolRun{a, d, e, f} {
		p.end(r)
	}
	full(false, "every run ended")
}

// start waits while the pool is full, and returns as soon as a run
// begins to wait, or nil once the context has ended.
func TestPoolStartWaits(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Unix(0, 0))
	p := newPool(1, 2, clk)
	ctx, cancel := context.WithCancel(context.Background())
	a := p.start(ctx)
	started := make(chan *poolRun)
	go func() { started <- p.start(ctx) }()
	p.waits(a, time.Second)
	if b := <-started; b == nil {
		t.Fatal("start returned nil while the context runs")
	}
	go func() { started <- p.start(ctx) }()
	cancel()
	if c := <-started; c != nil {
		t.Error("start returned a run after the context ended")
	}
}
