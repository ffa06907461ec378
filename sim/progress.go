package sim

import (
	"time"

	"github.com/cachelab/cachelab/sim/trace"
)

// Progress is how far a run has got, counted since it began: what a
// person watching a long step (a 10,000-object start) wants to see move.
// The counts are cachelab's; client-go's side does the same work.
type Progress struct {
	Created int // objects created in etcd (create, bulk-create)
	Relayed int // watch events the connection handed to cachelab's reflector
	Calls   int // calls to cachelab's handlers
	// Clock is the scenario's time: an advance of a day moves it on.
	Clock time.Duration
}

// Progress reads the run's counts. Unlike every other method of Session,
// it may be called from another goroutine while Step runs: each count is
// read under its own lock or atomically, so a snapshot may be a moment
// older in one count than in another, never torn.
func (s *Session) Progress() Progress {
	rec := s.rec // cachelab's, of start's informer (factories add sides as the run goes)
	return Progress{Created: int(s.r.created.Load()), Relayed: rec.Counted(trace.KindEvent), Calls: rec.Counted(trace.KindCall),
		Clock: s.r.clock.Since(epoch)}
}
