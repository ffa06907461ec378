package main

import (
	"fmt"
	"io"
	"time"

	"k8s.io/utils/clock"

	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/sim/trace"
)

// progressEvery is how often the progress line is redrawn: a few times a
// second, so it moves without flickering, and the first line comes a
// quarter second into a step (a step that ends sooner shows none).
const progressEvery = 250 * time.Millisecond

// progress draws one line on stderr while a step runs, for a person
// waiting on a long one (a 10,000-object start takes seconds, and its
// trace comes only when the step has settled):
//
//	step 3 (start): 10,000 objects created · 6,412 events relayed · 5,980 handler calls
//
// A step that moves the scenario's clock (a long advance) shows how far
// it has got, so that a day of scenario time is seen to pass:
//
//	step 6 (advance 24h): clock 3h12m0s (+3h12m0s) · 0 objects created · ...
//
// The line is redrawn in place (carriage return, erase line) on each tick
// of its ticker and erased when the step ends, before the step's trace is
// printed. It is only for a terminal: the counts go by too fast to be
// worth keeping in a log.
type progress struct {
	w      io.Writer
	read   func() sim.Progress
	ticker clock.Ticker
	width  int           // the terminal's columns; a longer line is cut, or it would wrap and not be erased
	stop   chan struct{} // closed by end
	done   chan struct{} // closed when the loop has erased its line
	began  time.Duration // the scenario's clock when the step began
}

// startProgress starts drawing step n's progress line, until the
// returned func is called; that func returns once the line is erased.
// With now, the line is drawn at once as well as on each tick.
func startProgress(w io.Writer, ticker clock.Ticker, width int, read func() sim.Progress, n int, cmd string, now bool) (end func()) {
	p := &progress{w: w, read: read, ticker: ticker, width: width, stop: make(chan struct{}), done: make(chan struct{})}
	p.began = read().Clock
	go p.loop(fmt.Sprintf("step %d (%s): ", n, cmd), now)
	return func() {
		close(p.stop)
		<-p.done
	}
}

func (p *progress) loop(prefix string, now bool) {
	defer close(p.done)
	defer p.ticker.Stop()
	drawn := false
	draw := func() {
		fmt.Fprintf(p.w, "\r\x1b[K%s", p.fit(prefix+progressText(p.read(), p.began)))
		drawn = true
	}
	if now {
		draw()
	}
	for {
		select {
		case <-p.ticker.C():
			draw()
		case <-p.stop:
			if drawn {
				fmt.Fprint(p.w, "\r\x1b[K")
			}
			return
		}
	}
}

// fit cuts line to the terminal's width, less one column: a line that
// reaches the last one wraps on some terminals, and a carriage return
// would then erase only its second half.
func (p *progress) fit(line string) string {
	if r := []rune(line); p.width > 1 && len(r) > p.width-1 {
		return string(r[:p.width-1])
	}
	return line
}

// progressText is the counts in words, after the scenario's clock if it
// has moved since the step began.
func progressText(pr sim.Progress, began time.Duration) string {
	clock := ""
	if pr.Clock != began {
		clock = fmt.Sprintf("clock %v (+%v) · ", pr.Clock, pr.Clock-began)
	}
	return clock + fmt.Sprintf("%s objects created · %s events relayed · %s handler calls",
		trace.Thousands(pr.Created), trace.Thousands(pr.Relayed), trace.Thousands(pr.Calls))
}
