// Package solution is the reference solution of chapter 9's lab.
package solution

// The steps of lost-delete.txt the answer turns on.
const (
	start   = 3 // the informer's first request: a watch-list
	advance = 4 // the clock moves a second
	del     = 5 // delete ns0/b
	compact = 7 // etcd forgets the history before ns0/c
)

// LosesDelete says whether a disconnect before step disconnectBefore,
// reconnected before step reconnectBefore, loses ns0/b's delete.
func LosesDelete(disconnectBefore, reconnectBefore int) bool {
	d, r := disconnectBefore, reconnectBefore
	switch {
	case d > del || r <= del:
		// Connected when ns0/b is deleted: the watch delivers it.
		return false
	case d <= start:
		// The informer has not listed when the connection drops: its
		// first list, at the reconnect, comes after ns0/b is gone, so
		// no handler call ever names it.
		return true
	case d <= advance:
		// The watch ends within a second of its start, with no events:
		// "very short", so the reflector relists (F4), after the delete,
		// and infers it: a tombstone (P3).
		return true
	default:
		// The watch ran a second: the reflector re-watches from rv 3
		// (F4) and gets the delete as an event, unless etcd has
		// compacted rv 3 away by then: 410 (E7), a relist, a tombstone.
		return r > compact
	}
}
