package apistorage

import (
	"fmt"
	"strings"
	"time"

	"github.com/cachelab/cachelab/internal/goroutines"
)

// drainTimeout bounds drain: a shutdown's wait, on the wall clock.
const drainTimeout = 10 * time.Second

// drain waits, before the cacher is stopped, until its reflector is not
// handing its dispatcher an event. Cacher.Stop ends the dispatcher first
// and then waits for the reflector; a reflector blocked handing over an
// event, the dispatcher's incoming queue (100 events) full, would wait for
// ever, and Stop with it. A kube-apiserver stops its caches only as it
// exits, where that does not matter; here they stop at every
// kube-apiserver restart and at the end of every run, sometimes with a
// backlog on its way (a held cache just released, a busy machine). With
// the feed closed the reflector gets nothing new, and the dispatcher,
// still running, takes what it hands over. (A FuzzRunner run hung in its
// Close so: TestStopDrainsTheReflector.)
func (c *cache) drain() {
	deadline := time.Now().Add(drainTimeout)
	for handingOver(c) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
}

// handingOver reports whether the cacher's reflector (the goroutine that
// runs startCaching) is in the middle of handing the dispatcher an event,
// or running at all: not parked.
func handingOver(c *cache) bool {
	frame := fmt.Sprintf("(*Cacher).startCaching(%p", c.cacher)
	for _, g := range goroutines.All() {
		if !strings.Contains(g, frame) {
			continue
		}
		switch goroutines.State(g) {
		case "select", "chan receive", "sync.Cond.Wait", "IO wait", "sleep":
			return strings.Contains(g, "(*Cacher).processEvent(")
		}
		return true
	}
	return false
}
