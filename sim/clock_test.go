package sim

import (
	"testing"
	"time"

	"github.com/cachelab/cachelab/internal/scenarioclock"
)

// cachelab's side is parked for a re-watch backoff only once the clock
// has the wait, as client-go's is: a step that moves the clock once the
// side has settled then always ends the wait. (Parked when the reflector
// traced the backoff, a moment before it asked the clock, the side could
// settle and the clock move before the wait was set; set after the move,
// the wait outlasted it, and the re-watch the step waited for never
// came: watch-errors in CI.)
func TestParkedOnceTheClockHasTheWait(t *testing.T) {
	clk := scenarioclock.New(epoch)
	waiting := -1
	pc := parkClock{newTickClock(clk, 0, 0), func(d time.Duration) {
		if d != 1425*time.Millisecond {
			t.Errorf("parked for %v, want the wait's 1.425s", d)
		}
		waiting = clk.Waiters()
	}}
	fired := pc.After(1425 * time.Millisecond)
	if waiting != 1 {
		t.Fatalf("parked with %d waits on the clock, want the backoff's own", waiting)
	}
	clk.Step(5 * time.Second) // the next step's advance
	select {
	case <-fired:
	default:
		t.Fatal("the clock moved past the backoff, and the wait did not end")
	}
}
