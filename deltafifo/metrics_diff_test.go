package deltafifo_test

import (
	"testing"

	. "github.com/cachelab/cachelab/internal/difftest"
)

// client-go: the_real_fifo.go addToItems_locked, addReplaceToItemsLocked,
// addResyncToItemsLocked, Pop, PopBatch, whileProcessing_locked,
// Bookmark; informer_metrics.go newFIFOMetrics (R8)
//
// Each side's queue has a reserved name and a Meter; after every step the
// values each side published are compared, in order. Processing takes no
// time in a synctest bubble, so the latencies compare exactly too.
func TestRealFIFOMetrics(t *testing.T) {
	bad := Pod("b/y", RV(2), Label(LabelTransformFails, "y"))
	runRealFIFO(t, []scriptCase{{
		name: "non-atomic: every queued delta sets the depth, every pop sets it and times processing", covers: "R8 R2 R4",
		cfg: QueueConfig{Metered: true, Transform: true},
		ops: []Op{
			Add(ax1), Update(ax2), Pop(), Pop(), KnownSet(ax2),
			Resync(),          // a Sync for a/x
			KnownSet(cz5),     //
			Replace("9", by1), // tombstones for a/x (queued) and cz (known), then b/y
			Add(bad),          // a transformer error queues nothing and sets nothing
			PopBatch(), PopFail(),
		},
		want: []string{
			"  (HasSynced is now true)",
			"add a/x@1 → metric queued-items 1",
			"update a/x@2 → metric queued-items 2",
			"pop → [Added a/x@1+t1]",
			"pop → metric queued-items 1",
			"pop → metric processing-latency 0s",
			"pop → [Updated a/x@2+t1]",
			"pop → metric queued-items 0",
			"pop → metric processing-latency 0s",
			"resync → metric queued-items 1",
			`replace [b/y@1] rv="9" → metric queued-items 2`,
			`replace [b/y@1] rv="9" → metric queued-items 3`,
			`replace [b/y@1] rv="9" → metric queued-items 4`,
			"add b/y@2 → error: error: transform refused b/y",
			"popbatch → [Sync a/x@2]",
			"popbatch → metric queued-items 3",
			"popbatch → metric processing-latency 0s",
			"pop (process fails) → [Deleted Tombstone(a/x: a/x@2)]",
			"pop (process fails) → error: error: process failed on purpose",
			"pop (process fails) → metric queued-items 2",
			"pop (process fails) → metric processing-latency 0s",
			"pop → [Deleted Tombstone(cz: cz@5)]",
			"pop → metric queued-items 1",
			"pop → metric processing-latency 0s",
			"pop → [Replaced b/y@1+t1]",
			"pop → metric queued-items 0",
			"pop → metric processing-latency 0s",
			"pop → error: closed",
		},
	}, {
		name: "atomic: a bookmark is queued without setting the depth", covers: "R8 R3",
		cfg: QueueConfig{Metered: true, Atomic: true, Bookmarks: true},
		ops: []Op{
			Bookmark("1"), Replace("2", ax1, by1), Bookmark("3"), Add(cz5), Resync(), Bookmark("4"),
			PopBatch(), PopBatch(), PopBatch(), PopBatch(), PopBatch(),
		},
		want: []string{
			`replace [a/x@1 b/y@1] rv="2" → metric queued-items 2`,
			"add cz@5 → metric queued-items 4",
			"resync → metric queued-items 5",
			"popbatch → [Bookmark {rv=1}] initial",
			"popbatch → metric queued-items 5",
			"popbatch → metric processing-latency 0s",
			"popbatch → [ReplacedAll {rv=2: a/x@1 b/y@1}] initial",
			"  (HasSynced is now true)",
			"popbatch → metric queued-items 4",
			"popbatch → metric processing-latency 0s",
			"popbatch → [Bookmark {rv=3}]",
			"popbatch → metric queued-items 3",
			"popbatch → metric processing-latency 0s",
			"popbatch → [Added cz@5]",
			"popbatch → metric queued-items 2",
			"popbatch → metric processing-latency 0s",
			"popbatch → [SyncAll {}]",
			"popbatch → metric queued-items 1",
			"popbatch → metric processing-latency 0s",
			"pop → [Bookmark {rv=4}]",
			"pop → metric queued-items 0",
			"pop → metric processing-latency 0s",
			"pop → error: closed",
		},
	}})
}
