package sim

import (
	"github.com/cachelab/cachelab/sim/trace"
)

// arrange puts a step's events in layer order, each layer in the order it
// happened, after marking a watch-list's replayed objects as a batch whose
// order is free (trace.MarkListed).
func arrange(es []trace.Event) []trace.Event {
	es = append([]trace.Event(nil), es...)
	trace.MarkListed(es)
	return trace.Arrange(es)
}
