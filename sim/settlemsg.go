package sim

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cachelab/cachelab/informer"
	"github.com/cachelab/cachelab/sim/trace"
	"github.com/cachelab/cachelab/sim/world"
)

// What a settle that did not settle says: what the side was waiting for,
// in words, and the last lines of its trace.

// settleTimeout is the error for a side that stopped making progress:
// what it was waiting for, the last lines of its trace, and what to try.
func (r *runner) settleTimeout(s *side, rev int64, want *snapshot, c world.State, took time.Duration) error {
	hint := fmt.Sprintf("no progress for %v (%v in all); if the machine is busy, try a longer --settle-timeout", r.opts.SettleTimeout, took.Round(time.Second))
	if want == nil && s.impl == trace.ClientGo { // settleSecond's wait
		return fmt.Errorf("client-go did not settle between two moves of the clock: %s.\nIt was waiting for: its requests to be made, "+
			"its watches to be open or waiting, and its last resync tick to be handled and popped.\nThe step's last trace lines:\n%s", hint, s.rec.Peek(20))
	}
	if want == nil {
		b, _ := s.inf.backlog()
		why := waitingFor(r.truth(), s.inf.lastSyncRV(), rev, c, b)
		if g := s.busy(); g != "" {
			why += ";\nand a goroutine of its own to park (parked.go), this one:\n" + g
		}
		return fmt.Errorf("cachelab did not settle: %s.\nIt was waiting for: %s.\nThe step's last trace lines:\n%s",
			hint, why, s.rec.Peek(20))
	}
	got := s.snapshot()
	if r.settledLike(got, *want) {
		// The state matches and the lines do not: the comparison that
		// follows says where they differ.
		return nil
	}
	return &trace.Divergence{Layer: "settle", Diff: fmt.Sprintf("client-go did not reach cachelab's state (%s at rv %d): %s.\n%s\n"+
		"The step's last trace lines, cachelab's:\n%sclient-go's:\n%s",
		r.truth(), rev, hint, clipLines(cmp.Diff(*want, got), 40), s.peer.rec.Peek(20), s.rec.Peek(20))}
}

// maxRelists is how many relist backoffs one step may begin on a side
// before settling gives up on it. A failed LIST is retried after a
// backoff of real time (REFERENCE.md F6: neither side's can be put on
// the scenario's clock), so a world that refuses every LIST (a resource
// it does not serve, a user it does not let list) would retry forever,
// each retry a new trace line, which settling counts as progress; and
// how many retries a step saw would depend on the wall clock. The
// scenarios' own faults fail one request each, and what fails the same
// way until etcd changes is held (corrupt-object): none begins this
// many in one step.
const maxRelists = 4

// refusedRelists is the error for a side whose LISTs the world keeps
// refusing.
func (r *runner) refusedRelists(s *side, n int) error {
	return fmt.Errorf("%s's informer cannot list: its reflector has begun %d relist backoffs in this step, each after a LIST the world refused, "+
		"and it would go on retrying for ever (the world does not serve the resource, or does not let the run's user list it).\nThe step's last trace lines:\n%s",
		s.impl, n, s.rec.Peek(12))
}

// waitingFor says in words what keeps cachelab from settling; truth
// names where the resourceVersion rev it waits for is (etcd, or the
// recording a replay plays).
func waitingFor(truth, lastRV string, rev int64, c world.State, b informer.Backlog) string {
	var why []string
	if !atLeast(lastRV, rev) {
		why = append(why, fmt.Sprintf("its reflector to reach %s's rv %d (it is at %q)", truth, rev, lastRV))
	}
	if c.Open == 0 && c.Waiting == 0 && !c.Parked {
		why = append(why, "a watch to be open (none is)")
	}
	for _, w := range []struct {
		on   bool
		text string
	}{{c.Listing, "a LIST or watch-list to be stored (Replace)"}, {c.Unapplied, "watch events handed over to be applied"},
		{c.AskedBookmark, "a bookmark etcd was asked for"}, {c.Expiring, "a watch past its timeout to end"},
		{b.Queued > 0, fmt.Sprintf("%d queued deltas to be processed", b.Queued)},
		{b.SyncPending > 0, "the sync bookkeeping"}} {
		if w.on {
			why = append(why, w.text)
		}
	}
	for h, n := range b.Handlers {
		if n > 0 {
			why = append(why, fmt.Sprintf("handler %s to take %d pending notifications", h, n))
		}
	}
	if len(why) == 0 {
		return "a resync tick to be handled"
	}
	sort.Strings(why)
	return strings.Join(why, "; ")
}
