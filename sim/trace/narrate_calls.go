package trace

import (
	"fmt"
	"strings"

	"github.com/cachelab/cachelab/informer"
)

// call takes in a handler call: a tombstone, an update that changes
// nothing, a late handler's catch-up say where they come from.
func (m *sideMemory) call(n *Narrator, e Event) string {
	l := m.last
	relisted := l != nil && l.relist && l.step == n.step // a relist completed in this step
	// The marks, not the Order: a watch-list's replayed objects are all
	// in one batch (OrderListed), whatever the call.
	same := strings.HasSuffix(e.Detail, SameObjectMark)
	switch {
	case e.Op == "OnDelete" && e.Order == OrderTombstones && l != nil && l.relist:
		return fmt.Sprintf(": a tombstone, as the relist at rv %s did not list %s (%s)", l.rv, e.Key, tombstoneID(n.header.Stack))
	case e.Op == "OnUpdate" && strings.HasSuffix(e.Detail, NewObjectMark) && relisted:
		return fmt.Sprintf(": %s found the new one, in its list at rv %s", l.what(), l.rv)
	case e.Op == "OnUpdate" && same && relisted:
		return fmt.Sprintf(": %s listed it unchanged, in its list at rv %s", l.what(), l.rv)
	case e.Op == "OnUpdate" && same && n.world.clockMoved == n.step && m.listAsked != n.step:
		return fmt.Sprintf(": a resync: the clock moved and no list was asked for, so the informer sent what it had cached again (%s)", resyncID(n.header.Stack))
	case e.Op == "OnAdd" && e.Order == OrderInitialList && m.handlers[e.Handler] && !(l != nil && l.step == n.step):
		return ": handler " + e.Handler + " was added after the informer had synced, so it first gets an OnAdd for each cached object (P8)"
	}
	return ""
}

// tombstoneID is the behaviour that makes a relist's tombstones: a
// ReplacedAll's in the default stack, a DeltaFIFO Replace's in the
// classic one.
func tombstoneID(st informer.Stack) string {
	if st == informer.Classic {
		return "D4"
	}
	return "P3"
}

// resyncID is the behaviour of a resync: a SyncAll in the default
// stack, Sync deltas in the classic one.
func resyncID(st informer.Stack) string {
	if st == informer.Classic {
		return "D5"
	}
	return "P4"
}

// workqueue takes in a controller's workqueue operation: a rate-limited
// requeue says how many came since the key was last forgotten (its wait
// doubles with each, K3), and a get with no add in its step says which
// requeue came due.
func (m *sideMemory) workqueue(n *Narrator, e Event) string {
	if e.Key == "" {
		return ""
	}
	q := m.queue[e.Handler+"/"+e.Key]
	if q == nil {
		q = &queued{}
		m.queue[e.Handler+"/"+e.Key] = q
	}
	switch e.Op {
	case "add", "coalesce":
		q.added = n.step
	case "forget":
		q.requeues, q.forgot = 0, n.step
	case "requeue":
		q.requeues++
		q.due, q.dueWhat = n.step, "requeue"
		if q.forgot == 0 {
			return fmt.Sprintf(": its %s rate-limited requeue, and it was never forgotten (K3)", ordinal(q.requeues))
		}
		return fmt.Sprintf(": its %s rate-limited requeue since its forget at step %d (K3)", ordinal(q.requeues), q.forgot)
	case "after":
		q.due, q.dueWhat = n.step, "requeue-after"
	case "get":
		due := q.due
		q.due = 0
		if due > 0 && due < n.step && q.added != n.step {
			return fmt.Sprintf(": its %s of step %d came due", q.dueWhat, due)
		}
	}
	return ""
}

// ordinal is n as "1st", "2nd", "3rd", "4th", ...
func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return fmt.Sprint(n) + suffix
}
