package main

import (
	"strings"
	"testing"
	"time"

	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/cachelab/cachelab/sim"
)

// writes is a writer that hands each write to the test: the progress
// line is drawn on its own goroutine, and the test waits for each
// drawing rather than sleeping.
type writes chan string

func (w writes) Write(b []byte) (int, error) {
	w <- string(b)
	return len(b), nil
}

// The progress line is drawn on each tick of its ticker, the first a
// quarter second into the step (so within a second of a long step
// starting), with the counts as they are then; it is erased when the
// step ends. The clock is a fake one: the test moves it.
func TestProgressLine(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(0, 0))
	w := make(writes, 10)
	counts := make(chan sim.Progress, 1)
	counts <- sim.Progress{Created: 10000, Relayed: 2500, Calls: 1200}
	read := func() sim.Progress { p := <-counts; counts <- p; return p }
	ticker := &stopSpy{Ticker: clk.NewTicker(progressEvery)}
	end := startProgress(w, ticker, 0, read, 3, "start", false)

	clk.Step(progressEvery - time.Millisecond)
	select {
	case got := <-w:
		t.Fatalf("drawn before the first tick: %q", got)
	default:
	}
	clk.Step(time.Millisecond)
	if got, want := <-w, "\r\x1b[Kstep 3 (start): 10,000 objects created · 2,500 events relayed · 1,200 handler calls"; got != want {
		t.Errorf("first line:\n got %q\nwant %q", got, want)
	}
	<-counts
	counts <- sim.Progress{Created: 10000, Relayed: 10001, Calls: 9000}
	clk.Step(progressEvery)
	if got := <-w; !strings.HasSuffix(got, "10,001 events relayed · 9,000 handler calls") {
		t.Errorf("second line: %q, want the new counts", got)
	}
	<-counts
	counts <- sim.Progress{Created: 10000, Relayed: 10001, Calls: 9000, Clock: 3*time.Hour + 12*time.Minute}
	clk.Step(progressEvery)
	if got, want := <-w, "\r\x1b[Kstep 3 (start): clock 3h12m0s (+3h12m0s) · 10,000 objects created"; !strings.HasPrefix(got, want) {
		t.Errorf("once the scenario's clock moves:\n got %q\nwant %q...", got, want)
	}
	end()
	if got, want := <-w, "\r\x1b[K"; got != want {
		t.Errorf("at the end: %q, want the line erased (%q)", got, want)
	}
	if !ticker.stopped {
		t.Errorf("the ticker was not stopped when the step ended")
	}
}

// stopSpy notes that its ticker was stopped (the fake clock's Stop does
// nothing).
type stopSpy struct {
	clock.Ticker
	stopped bool
}

func (s *stopSpy) Stop() { s.stopped = true; s.Ticker.Stop() }

// A step that ends before the first tick draws nothing, and so erases
// nothing: a short step leaves stderr as it was.
func TestProgressLineShortStep(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(0, 0))
	w := make(writes, 10)
	end := startProgress(w, clk.NewTicker(progressEvery), 0, func() sim.Progress { return sim.Progress{} }, 1, "create ns0/a", false)
	end()
	if len(w) != 0 {
		t.Errorf("a step shorter than a tick wrote %q", <-w)
	}
}

// On a terminal of known width the line is cut to one column less, so
// that it never wraps (a wrapped line is not erased by a carriage
// return).
func TestProgressLineFitsTheTerminal(t *testing.T) {
	p := &progress{width: 30}
	if got := p.fit(strings.Repeat("x", 50)); len(got) != 29 {
		t.Errorf("fit to 30 columns: %d columns, want 29", len(got))
	}
}
