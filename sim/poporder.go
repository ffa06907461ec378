package sim

import (
	"time"

	"github.com/cachelab/cachelab/sim/trace"
)

// popOrder puts a resync's SyncAll pop ahead of a Bookmark pop of the same
// instant of the scenario's clock. In the watch-cache world, time passes
// a second at a time, and one second can fire both the reflector's resync
// timer and the watch cache's bookmark timer (each minute): the resync's
// SyncAll and the bookmark then reach the RealFIFO on two goroutines, in
// either order (FuzzRunner, seed 105). In the etcd world the order is
// fixed and is this one: the resync fires with the clock, and the
// bookmark comes from the progress request settling makes afterwards.
// Neither changes what the handlers get (a bookmark moves only the
// store's resourceVersion), so the pop layer shows one order, this one.
type popOrder struct {
	now        func() time.Time
	bookmarkAt time.Time // when the last pop, a Bookmark, was recorded; zero otherwise
}

func (p *popOrder) record(rec *trace.Recorder, e trace.Event) {
	now := p.now()
	switch {
	case e.Op == "SyncAll" && !p.bookmarkAt.IsZero() && p.bookmarkAt.Equal(now):
		rec.RecordBefore(e, func(prev trace.Event) bool { return prev.Kind == trace.KindPop && prev.Op == "Bookmark" })
		return // the Bookmark is still the last pop
	case e.Op == "Bookmark":
		p.bookmarkAt = now
	default:
		p.bookmarkAt = time.Time{}
	}
	rec.Record(e)
}
