package deltafifo_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	. "github.com/cachelab/cachelab/internal/difftest"
)

// scriptCase is one differential script: it runs against cachelab and
// client-go, must agree at every step, and its transcript must be want.
type scriptCase struct {
	name   string
	covers string // REFERENCE.md IDs
	cfg    QueueConfig
	ops    []Op
	want   []string
}

func runDeltaFIFO(t *testing.T, cases []scriptCase) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := RunQueueScript(t, false, DeltaFIFOPair(tc.cfg), tc.ops)
			checkTranscript(t, got, tc.want)
		})
	}
}

func checkTranscript(t *testing.T, got, want []string) {
	t.Helper()
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("transcript (-want +got):\n%s\ngot:\n\t%s", d, strings.Join(got, "\n\t"))
	}
}

var (
	ax1 = Pod("a/x", RV(1))
	ax2 = Pod("a/x", RV(2))
	ax3 = Pod("a/x", RV(3))
	by1 = Pod("b/y", RV(1))
	by4 = Pod("b/y", RV(4))
	cz5 = Pod("cz", RV(5)) // cluster-scoped
)

// client-go: delta_fifo.go queueActionInternalLocked (D1)
func TestDeltaFIFOOrder(t *testing.T) {
	runDeltaFIFO(t, []scriptCase{{
		name: "a key keeps its first place and its deltas append", covers: "D1",
		ops: []Op{Add(ax1), Add(by1), Update(ax2), Add(cz5), Update(by4), Pop(), Pop(), Pop()},
		want: []string{
			"  (HasSynced is now true)",
			"pop → [Added a/x@1, Updated a/x@2]",
			"pop → [Added b/y@1, Updated b/y@4]",
			"pop → [Added cz@5]",
			"pop → error: closed",
		},
	}, {
		name: "a popped key that comes back goes to the end", covers: "D1",
		ops: []Op{Add(ax1), Add(by1), Pop(), Update(ax2), Pop(), Pop()},
		want: []string{
			"  (HasSynced is now true)",
			"pop → [Added a/x@1]",
			"pop → [Added b/y@1]",
			"pop → [Updated a/x@2]",
			"pop → error: closed",
		},
	}})
}

// client-go: delta_fifo.go dedupDeltas, isDeletionDup (D2)
func TestDeltaFIFODedup(t *testing.T) {
	runDeltaFIFO(t, []scriptCase{{
		name: "two deletes in a row merge, keeping the older", covers: "D2",
		ops:  []Op{Add(ax1), Delete(ax2), Delete(ax3), Pop()},
		want: []string{"  (HasSynced is now true)", "pop → [Added a/x@1, Deleted a/x@2]", "pop → error: closed"},
	}, {
		name: "a real delete after a tombstone replaces it", covers: "D2 D4",
		cfg: QueueConfig{Known: true},
		ops: []Op{KnownSet(ax1), Replace("9"), Delete(ax2), Pop()},
		want: []string{
			"pop → [Deleted a/x@2] initial synced-in-process",
			"  (HasSynced is now true)",
			"pop → error: closed",
		},
	}, {
		name: "only the last two deltas are compared", covers: "D2",
		ops: []Op{Add(ax1), Delete(ax1), Add(ax2), Delete(ax3), Pop()},
		want: []string{"  (HasSynced is now true)",
			"pop → [Added a/x@1, Deleted a/x@1, Added a/x@2, Deleted a/x@3]", "pop → error: closed"},
	}})
}

// client-go: delta_fifo.go Delete (D3)
func TestDeltaFIFODeleteUnknown(t *testing.T) {
	runDeltaFIFO(t, []scriptCase{{
		name: "unknown key without KnownObjects: dropped, but the queue is populated", covers: "D3 D6",
		ops:  []Op{Delete(ax1), Add(by1), Pop()},
		want: []string{"  (HasSynced is now true)", "pop → [Added b/y@1]", "pop → error: closed"},
	}, {
		name: "unknown to the queue but known to the cache: queued", covers: "D3",
		cfg:  QueueConfig{Known: true},
		ops:  []Op{KnownSet(ax1), Delete(ax2), Delete(by1), Pop()},
		want: []string{"  (HasSynced is now true)", "pop → [Deleted a/x@2]", "pop → error: closed"},
	}, {
		name: "a failing KnownObjects lookup counts as known", covers: "D3",
		cfg:  QueueConfig{Known: true},
		ops:  []Op{KnownSet(Pod("a/x", RV(1), Label(LabelLookupFails, "y"))), Delete(ax2), Pop()},
		want: []string{"  (HasSynced is now true)", "pop → [Deleted a/x@2]", "pop → error: closed"},
	}})
}

// client-go: delta_fifo.go Replace (D4)
func TestDeltaFIFOReplace(t *testing.T) {
	runDeltaFIFO(t, []scriptCase{{
		name: "Sync deltas by default, in list order, a queued key keeps its place", covers: "D4 D1",
		ops: []Op{Add(by1), Replace("7", ax1, by4, cz5), Pop(), Pop(), Pop()},
		want: []string{
			"  (HasSynced is now true)",
			"pop → [Added b/y@1, Sync b/y@4]",
			"pop → [Sync a/x@1]",
			"pop → [Sync cz@5]",
			"pop → error: closed",
		},
	}, {
		name: "Replaced deltas with EmitDeltaTypeReplaced", covers: "D4",
		cfg: QueueConfig{EmitReplaced: true},
		ops: []Op{Replace("7", ax1, by1), Pop(), Pop()},
		want: []string{
			"pop → [Replaced a/x@1] initial",
			"pop → [Replaced b/y@1] initial synced-in-process",
			"  (HasSynced is now true)",
			"pop → error: closed",
		},
	}, {
		name: "a queued key not listed gets a tombstone with its newest object", covers: "D4",
		ops: []Op{Add(ax1), Update(ax2), Add(by1), Replace("7", by4), Pop(), Pop()},
		want: []string{
			"  (HasSynced is now true)",
			"pop → [Added a/x@1, Updated a/x@2, Deleted Tombstone(a/x: a/x@2)]",
			"pop → [Added b/y@1, Sync b/y@4]",
			"pop → error: closed",
		},
	}, {
		name: "a tombstone's object is unwrapped, not nested", covers: "D4 D2",
		cfg: QueueConfig{Known: true},
		ops: []Op{KnownSet(ax1), Replace("7"), Replace("8"), Pop()},
		want: []string{
			"pop → [Deleted Tombstone(a/x: a/x@1)] initial synced-in-process",
			"  (HasSynced is now true)",
			"pop → error: closed",
		},
	}, {
		name: "known keys neither listed nor queued get tombstones, in KnownObjects order", covers: "D4",
		cfg: QueueConfig{Known: true},
		ops: []Op{KnownSet(cz5), KnownSet(ax1), KnownSet(Pod("b/y", RV(2), Label(LabelLookupFails, "y"))), Add(by4),
			Replace("7", Pod("a/x", RV(6))), Pop(), Pop(), Pop()},
		want: []string{
			"  (HasSynced is now true)",
			"pop → [Added b/y@4, Deleted Tombstone(b/y: b/y@4)]",
			"pop → [Sync a/x@6]",
			"pop → [Deleted Tombstone(cz: cz@5)]",
			"pop → error: closed",
		},
	}, {
		name: "a failing lookup gives a tombstone without an object", covers: "D4",
		cfg: QueueConfig{Known: true},
		ops: []Op{KnownSet(Pod("b/y", RV(2), Label(LabelLookupFails, "y"))), Replace("7"), Pop()},
		want: []string{
			`replace [] rv="7" → reported: error "Unexpected error during lookup, placing DeleteFinalStateUnknown marker without object" err=lookup of "b/y" refused [key b/y] @library`,
			"pop → [Deleted Tombstone(b/y: nil)] initial synced-in-process", "  (HasSynced is now true)", "pop → error: closed",
		},
	}, {
		// The failed Replace did not mark the queue populated, so it never
		// syncs and what it queued still pops as initial.
		name: "a key error stops Replace where it is", covers: "D4 D6",
		ops: []Op{Replace("7", ax1, Bad(1), by1), Pop()},
		want: []string{
			`replace [a/x@1 difftest.BadObject{ID:1} b/y@1] rv="7" → error: KeyError: couldn't create key for object {ID:1}: object has no meta: object does not implement the Object interfaces`,
			"pop → [Sync a/x@1] initial",
			"pop → error: closed",
		},
	}})
}

// client-go: delta_fifo.go Resync, syncKeyLocked (D5)
func TestDeltaFIFOResync(t *testing.T) {
	runDeltaFIFO(t, []scriptCase{{
		name: "nothing without KnownObjects", covers: "D5",
		ops: []Op{Add(ax1), Pop(), Resync(), Pop()},
		want: []string{"  (HasSynced is now true)", "pop → [Added a/x@1]",
			"pop → skipped (the queue is empty: Pop would block)", "pop → error: closed"},
	}, {
		name: "a Sync for every known key with nothing queued", covers: "D5",
		cfg: QueueConfig{Known: true},
		ops: []Op{Add(ax1), Add(by1), Add(cz5), Pop(), Pop(), Pop(), Update(by4), Resync(), Pop(), Pop(), Pop()},
		want: []string{
			"  (HasSynced is now true)",
			"pop → [Added a/x@1]",
			"pop → [Added b/y@1]",
			"pop → [Added cz@5]",
			"pop → [Updated b/y@4]",
			"pop → [Sync a/x@1]",
			"pop → [Sync cz@5]",
			"pop → error: closed",
		},
	}})
}

// client-go: delta_fifo.go HasSynced, Pop, Replace (D6)
func TestDeltaFIFOHasSynced(t *testing.T) {
	runDeltaFIFO(t, []scriptCase{{
		name: "synced once the first Replace is popped; the count drops before process", covers: "D6",
		ops: []Op{Replace("5", ax1, by1, ax2), Add(cz5), Pop(), Pop(), Pop()},
		want: []string{
			"pop → [Sync a/x@1, Sync a/x@2] initial",
			"pop → [Sync b/y@1] initial synced-in-process",
			"  (HasSynced is now true)",
			"pop → [Added cz@5]",
			"pop → error: closed",
		},
	}, {
		name: "tombstones count toward the initial list", covers: "D6 D4",
		cfg: QueueConfig{Known: true},
		ops: []Op{KnownSet(cz5), Replace("5", ax1), Pop(), Pop()},
		want: []string{
			"pop → [Sync a/x@1] initial",
			"pop → [Deleted Tombstone(cz: cz@5)] initial synced-in-process",
			"  (HasSynced is now true)",
			"pop → error: closed",
		},
	}, {
		name: "an empty first Replace syncs at once", covers: "D6",
		ops: []Op{Replace("1"), Add(ax1), Pop()},
		want: []string{"  (HasSynced is now true)", "pop → [Added a/x@1]",
			"pop → error: closed"},
	}, {
		name: "only the first Replace counts", covers: "D6",
		ops: []Op{Replace("1", ax1), Replace("2", by1), Pop(), Pop()},
		want: []string{
			"pop → [Sync a/x@1, Deleted Tombstone(a/x: a/x@1)] initial synced-in-process",
			"  (HasSynced is now true)",
			"pop → [Sync b/y@1]",
			"pop → error: closed",
		},
	}})
}

// client-go: delta_fifo.go Pop, Close (D7)
func TestDeltaFIFOPopAndClose(t *testing.T) {
	runDeltaFIFO(t, []scriptCase{{
		name: "a process error is returned and the deltas are not requeued", covers: "D7",
		ops: []Op{Add(ax1), PopFail(), Add(by1), Pop()},
		want: []string{
			"  (HasSynced is now true)",
			"pop (process fails) → [Added a/x@1]",
			"pop (process fails) → error: error: process failed on purpose",
			"pop → [Added b/y@1]",
			"pop → error: closed",
		},
	}, {
		name: "after Close, Pop drains and writes still work", covers: "D7",
		ops: []Op{Add(ax1), Close(), Add(by1), Pop(), Pop(), Pop()},
		want: []string{
			"  (HasSynced is now true)",
			"pop → [Added a/x@1]",
			"pop → [Added b/y@1]",
			"pop → error: closed",
			"pop → error: closed",
		},
	}})
}

// client-go: delta_fifo.go queueActionInternalLocked, Replace, syncKeyLocked (D8)
func TestDeltaFIFOTransformer(t *testing.T) {
	runDeltaFIFO(t, []scriptCase{{
		name: "once on entry, also for Replace as Sync; never for tombstones or Resync", covers: "D8",
		cfg: QueueConfig{Known: true, Transform: true},
		ops: []Op{Add(ax1), Pop(), Resync(), Pop(), Replace("4", by1), Pop(), Pop(), Delete(by4), Pop()},
		want: []string{
			"  (HasSynced is now true)",
			"pop → [Added a/x@1+t1]",
			"pop → [Sync a/x@1+t1]",
			"pop → [Sync b/y@1+t1]",
			"pop → [Deleted Tombstone(a/x: a/x@1+t1)]",
			"pop → [Deleted b/y@4+t1]",
			"pop → error: closed",
		},
	}, {
		name: "a transformer error is returned by the call", covers: "D8",
		cfg: QueueConfig{Transform: true},
		ops: []Op{Add(Pod("a/x", Label(LabelTransformFails, "y"))), Replace("1", Pod("b/y", Label(LabelTransformFails, "y"))), Pop()},
		// Add marks the queue populated before the transform fails.
		want: []string{
			"add a/x@ → error: error: transform refused a/x",
			"  (HasSynced is now true)",
			`replace [b/y@] rv="1" → error: error: couldn't enqueue object: transform refused b/y`,
			"pop → skipped (the queue is empty: Pop would block)",
			"pop → error: closed",
		},
	}})
}

// Bad input gets client-go's errors: nil, no metadata, after Close.
func TestDeltaFIFOBadInput(t *testing.T) {
	runDeltaFIFO(t, []scriptCase{{
		name: "nil and metadata-less objects are key errors", covers: "D3 D6",
		ops: []Op{Add(nil), Update(Bad(2)), Delete(nil), Pop()},
		want: []string{
			"add nil → error: KeyError: couldn't create key for object <nil>: object has no meta: object does not implement the Object interfaces",
			"  (HasSynced is now true)",
			"update difftest.BadObject{ID:2} → error: KeyError: couldn't create key for object {ID:2}: object has no meta: object does not implement the Object interfaces",
			"delete nil → error: KeyError: couldn't create key for object <nil>: object has no meta: object does not implement the Object interfaces",
			"pop → skipped (the queue is empty: Pop would block)",
			"pop → error: closed",
		},
	}})
}
