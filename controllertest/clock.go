package controllertest

import (
	"runtime"
	"strings"
	"time"

	"k8s.io/utils/clock"

	"github.com/cachelab/cachelab/internal/scenarioclock"
)

// worldClock is the clock World.Clock gives the controller: the world's,
// but for the tickers client-go's work queues start on it, which it
// leaves out of the moments the world stops at (scenarioclock's
// Exclude). A queue ticks every 500 ms to update its unfinished-work
// metric, and every 10 s to look again at the keys it holds back (its
// heartbeat): neither changes what the controller does, since each key
// held back has a timer of its own, which the world does stop at. An
// advance of five minutes is then a handful of moments, not 600.
type worldClock struct{ *scenarioclock.Clock }

var _ clock.WithTicker = worldClock{}

func (c worldClock) NewTicker(d time.Duration) clock.Ticker {
	t := c.Clock.NewTicker(d)
	if calledFrom(workqueueCode) {
		c.Clock.Exclude(t)
	}
	return t
}

const workqueueCode = "k8s.io/client-go/util/workqueue."

// calledFrom reports whether code (a function name's prefix) is among
// the caller's callers.
func calledFrom(code string) bool {
	pcs := make([]uintptr, 16)
	n := runtime.Callers(3, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if strings.HasPrefix(f.Function, code) {
			return true
		}
		if !more {
			return false
		}
	}
}
