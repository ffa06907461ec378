package deltafifo_test

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/deltafifo"
	. "github.com/cachelab/cachelab/internal/difftest"
)

func runRealFIFO(t *testing.T, cases []scriptCase) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := RunQueueScript(t, false, RealFIFOPair(tc.cfg), tc.ops)
			checkTranscript(t, got, tc.want)
		})
	}
}

var atomic = QueueConfig{Atomic: true}

// client-go: the_real_fifo.go Add, Update, Delete (R1)
func TestRealFIFONoCoalescing(t *testing.T) {
	for _, cfg := range []QueueConfig{{}, atomic} {
		runRealFIFO(t, []scriptCase{{
			name: fmt.Sprintf("atomic=%v", cfg.Atomic), covers: "R1 R5", cfg: cfg,
			ops: []Op{Add(ax1), Update(ax2), Delete(ax3), Delete(by1), Pop(), Pop(), Pop(), Pop()},
			want: []string{
				"  (HasSynced is now true)",
				"pop → [Added a/x@1]",
				"pop → [Updated a/x@2]",
				"pop → [Deleted a/x@3]",
				"pop → [Deleted b/y@1]",
				"pop → error: closed",
			},
		}})
	}
}

// client-go: the_real_fifo.go Replace, reconcileReplacement (R2)
func TestRealFIFOReplaceNonAtomic(t *testing.T) {
	runRealFIFO(t, []scriptCase{{
		name: "tombstones for queued keys, then known keys, then Replaced in list order", covers: "R2",
		cfg: QueueConfig{Transform: true},
		ops: []Op{
			Add(ax1), Pop(), // a/x becomes known
			KnownSet(cz5),
			Add(by1), Update(by4), Add(Pod("d/w", RV(6))), Delete(Pod("d/w", RV(7))),
			Replace("9", Pod("e/v", RV(8)), ax2),
			Pop(), Pop(), Pop(), Pop(), Pop(), Pop(), Pop(), Pop(),
		},
		want: []string{
			"  (HasSynced is now true)",
			"pop → [Added a/x@1+t1]",
			"pop → [Added b/y@1+t1]",
			"pop → [Updated b/y@4+t1]",
			"pop → [Added d/w@6+t1]",
			"pop → [Deleted d/w@7+t1]",
			"pop → [Deleted Tombstone(b/y: b/y@4+t1)]",
			"pop → [Deleted Tombstone(cz: cz@5)]",
			"pop → [Replaced e/v@8+t1]",
			"pop → [Replaced a/x@2+t1]",
			"pop → error: closed",
		},
	}, {
		name: "the first Replace makes the whole queue the initial list", covers: "R2 R5",
		ops: []Op{KnownSet(cz5), Replace("9", ax1), Pop(), Pop()},
		want: []string{
			"pop → [Deleted Tombstone(cz: cz@5)] initial",
			"pop → [Replaced a/x@1] initial",
			"  (HasSynced is now true)",
			"pop → error: closed",
		},
	}, {
		name: "a failing lookup gives a tombstone without an object", covers: "R2",
		ops: []Op{KnownSet(Pod("b/y", RV(2), Label(LabelLookupFails, "y"))), Replace("7"), Pop()},
		want: []string{
			`replace [] rv="7" → reported: error "Error during lookup, placing DeleteFinalStateUnknown marker without object" err=lookup of "b/y" refused [key b/y] @library`,
			"pop → [Deleted Tombstone(b/y: nil)] initial", "  (HasSynced is now true)", "pop → error: closed",
		},
	}, {
		name: "a key error leaves the queue untouched", covers: "R2",
		ops: []Op{Add(ax1), Replace("7", by1, Bad(3)), Pop()},
		want: []string{
			"  (HasSynced is now true)",
			`replace [b/y@1 difftest.BadObject{ID:3}] rv="7" → error: KeyError: couldn't create key for object {ID:3}: object has no meta: object does not implement the Object interfaces`,
			"pop → [Added a/x@1]",
			"pop → error: closed",
		},
	}})
}

// client-go: the_real_fifo.go addReplaceToItemsLocked, addResyncToItemsLocked, Bookmark (R3)
func TestRealFIFOAtomic(t *testing.T) {
	runRealFIFO(t, []scriptCase{{
		name: "Replace, Resync and Bookmark are one delta each", covers: "R3 R5",
		cfg: QueueConfig{Atomic: true, Bookmarks: true, Transform: true},
		ops: []Op{Bookmark("3"), Resync(), Replace("5", ax1, by1, Bad(4)), Add(cz5), Pop(), Pop(), Pop(), Pop()},
		want: []string{
			"pop → [Bookmark {rv=3}] initial",
			"pop → [SyncAll {}] initial",
			"pop → [ReplacedAll {rv=5: a/x@1+t1 b/y@1+t1 difftest.BadObject{ID:4}}] initial",
			"  (HasSynced is now true)",
			"pop → [Added cz@5+t1]",
			"pop → error: closed",
		},
	}, {
		name: "Bookmark does nothing without EmitDeltaTypeBookmark", covers: "R3",
		cfg:  atomic,
		ops:  []Op{Bookmark("3"), Replace("5"), Pop()},
		want: []string{"pop → [ReplacedAll {rv=5: }] initial", "  (HasSynced is now true)", "pop → error: closed"},
	}, {
		name: "a transform error queues nothing", covers: "R3",
		cfg: QueueConfig{Atomic: true, Transform: true},
		ops: []Op{Replace("5", ax1, Pod("b/y", Label(LabelTransformFails, "y"))), Add(cz5), Pop()},
		want: []string{
			`replace [a/x@1 b/y@] rv="5" → error: error: transform refused b/y`,
			"  (HasSynced is now true)",
			"pop → [Added cz@5+t1]",
			"pop → error: closed",
		},
	}})
}

// client-go: the_real_fifo.go Resync (R4)
func TestRealFIFOResyncNonAtomic(t *testing.T) {
	runRealFIFO(t, []scriptCase{{
		name: "a Sync for every known key with nothing queued, untransformed", covers: "R4",
		cfg: QueueConfig{Transform: true},
		ops: []Op{Add(ax1), Add(by1), Pop(), Pop(), KnownSet(cz5), Add(by4), Resync(), Pop(), Pop(), Pop()},
		want: []string{
			"  (HasSynced is now true)",
			"pop → [Added a/x@1+t1]",
			"pop → [Added b/y@1+t1]",
			"pop → [Added b/y@4+t1]",
			"pop → [Sync a/x@1+t1]",
			"pop → [Sync cz@5]",
			"pop → error: closed",
		},
	}})
}

// client-go: the_real_fifo.go PopBatch (R6)
func TestRealFIFOPopBatch(t *testing.T) {
	bookmarks := QueueConfig{Atomic: true, Bookmarks: true}
	runRealFIFO(t, []scriptCase{{
		name: "a run of distinct keys, closed by a repeated key", covers: "R6",
		cfg: atomic,
		ops: []Op{Add(ax1), Add(by1), Add(cz5), Update(ax2), Add(Pop0), PopBatch(), PopBatch()},
		want: []string{
			"  (HasSynced is now true)",
			"popbatch → batch [Added a/x@1, Added b/y@1, Added cz@5]",
			"popbatch → batch [Updated a/x@2, Added d/p@0]",
			"pop → error: closed",
		},
	}, {
		name: "a non-batchable delta closes a run and is processed alone", covers: "R6",
		cfg: bookmarks,
		ops: []Op{Add(ax1), Add(by1), Bookmark("5"), Add(cz5), PopBatch(), PopBatch(), PopBatch()},
		want: []string{
			"  (HasSynced is now true)",
			"popbatch → batch [Added a/x@1, Added b/y@1]",
			"popbatch → [Bookmark {rv=5}]",
			"popbatch → [Added cz@5]",
			"pop → error: closed",
		},
	}, {
		name: "a run never crosses the end of the initial list", covers: "R6",
		ops: []Op{KnownSet(cz5), Replace("5", ax1, by1), Add(Pop0), PopBatch(), PopBatch()},
		want: []string{
			"popbatch → batch [Deleted Tombstone(cz: cz@5), Replaced a/x@1, Replaced b/y@1] initial",
			"  (HasSynced is now true)",
			"popbatch → [Added d/p@0]",
			"pop → error: closed",
		},
	}, {
		name: "a process error is returned", covers: "R6 P11",
		cfg: atomic,
		ops: []Op{Add(ax1), Add(by1), {Kind: OpPopBatch, Fail: true}},
		want: []string{
			"  (HasSynced is now true)",
			"popbatch (process fails) → batch [Added a/x@1, Added b/y@1]",
			"popbatch (process fails) → error: error: process failed on purpose",
			"pop → error: closed",
		},
	}})
}

// Pop0 is a fourth object for batch tests.
var Pop0 = Pod("d/p", RV(0))

// client-go: the_real_fifo.go PopBatch, defaultBatchSize (R6)
func TestRealFIFOPopBatchLimit(t *testing.T) {
	var ops []Op
	for i := range 1001 {
		ops = append(ops, Add(Pod(fmt.Sprintf("n/%04d", i), RV(i+1))))
	}
	ops = append(ops, PopBatch(), PopBatch())
	got := RunQueueScript(t, false, RealFIFOPair(atomic), ops)
	var sizes []int
	for _, line := range got {
		if strings.HasPrefix(line, "popbatch") {
			sizes = append(sizes, strings.Count(line, "Added"))
		}
	}
	if fmt.Sprint(sizes) != "[1000 1]" {
		t.Errorf("batch sizes = %v, want [1000 1]", sizes)
	}
}

// client-go: the_real_fifo.go NewRealFIFOWithOptions (R7)
func TestRealFIFOOptionPanics(t *testing.T) {
	known := NewKnown()
	cases := []struct {
		name   string
		covers string
		cl     deltafifo.RealFIFOOptions
		cg     cache.RealFIFOOptions
	}{
		{"atomic with known objects", "R7",
			deltafifo.RealFIFOOptions{AtomicEvents: true, KnownObjects: known},
			cache.RealFIFOOptions{AtomicEvents: true, KnownObjects: known}},
		{"non-atomic without known objects", "R7",
			deltafifo.RealFIFOOptions{}, cache.RealFIFOOptions{}},
		{"unlock without atomic", "R7",
			deltafifo.RealFIFOOptions{UnlockWhileProcessing: true, KnownObjects: known},
			cache.RealFIFOOptions{UnlockWhileProcessing: true, KnownObjects: known}},
		{"bookmarks without atomic", "R7",
			deltafifo.RealFIFOOptions{EmitDeltaTypeBookmark: true, KnownObjects: known},
			cache.RealFIFOOptions{EmitDeltaTypeBookmark: true, KnownObjects: known}},
		{"valid: atomic, unlocked, bookmarks", "R7",
			deltafifo.RealFIFOOptions{AtomicEvents: true, UnlockWhileProcessing: true, EmitDeltaTypeBookmark: true},
			cache.RealFIFOOptions{AtomicEvents: true, UnlockWhileProcessing: true, EmitDeltaTypeBookmark: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cl := CatchPanic(func() { deltafifo.NewRealFIFO(tc.cl) })
			cg := CatchPanic(func() { cache.NewRealFIFOWithOptions(tc.cg) })
			if strings.TrimPrefix(cl, "deltafifo: ") != cg {
				t.Errorf("panic: cachelab %q, client-go %q", cl, cg)
			}
			if strings.HasPrefix(tc.name, "valid") != (cl == "") {
				t.Errorf("panic %q unexpected for %s", cl, tc.name)
			}
		})
	}
}

// With UnlockWhileProcessing, process runs without the queue's lock, so it
// may write to the queue; without it, that would deadlock.
// client-go: the_real_fifo.go whileProcessing_locked
func TestRealFIFOUnlockWhileProcessing(t *testing.T) {
	cl := deltafifo.NewRealFIFO(deltafifo.RealFIFOOptions{AtomicEvents: true, UnlockWhileProcessing: true})
	cg := cache.NewRealFIFOWithOptions(cache.RealFIFOOptions{AtomicEvents: true, UnlockWhileProcessing: true})
	for _, q := range []interface{ Add(any) error }{cl, cg} {
		if err := q.Add(ax1); err != nil {
			t.Fatal(err)
		}
	}
	// Each Add takes the queue's lock: it returns only if Pop released it.
	_, clErr := cl.Pop(func(any, bool) error { return cl.Add(by1) })
	_, cgErr := cg.Pop(func(any, bool) error { return cg.Add(by1) })
	if clErr != nil || cgErr != nil {
		t.Fatalf("Pop errors: cachelab %v, client-go %v", clErr, cgErr)
	}
	if cl.Len() != 1 {
		t.Errorf("cachelab queue has %d deltas after the nested Add, want 1", cl.Len())
	}
}

// client-go: delta_fifo.go KeyOf, the_real_fifo.go keyOf
func TestKeyOf(t *testing.T) {
	clD := deltafifo.NewDeltaFIFO(deltafifo.DeltaFIFOOptions{})
	cgD := cache.NewDeltaFIFOWithOptions(cache.DeltaFIFOOptions{})
	tomb := func(k string) (any, any) {
		return deltafifo.DeletedFinalStateUnknown{Key: k}, cache.DeletedFinalStateUnknown{Key: k}
	}
	clT, cgT := tomb("t/k")
	inputs := []struct{ cl, cg any }{
		{ax1, ax1},
		{deltafifo.Deltas{}, cache.Deltas{}},
		{deltafifo.Deltas{{Type: deltafifo.Added, Object: ax1}, {Type: deltafifo.Deleted, Object: clT}},
			cache.Deltas{{Type: cache.Added, Object: ax1}, {Type: cache.Deleted, Object: cgT}}},
		{clT, cgT},
		{nil, nil},
	}
	for i, in := range inputs {
		a, aErr := clD.KeyOf(in.cl)
		b, bErr := cgD.KeyOf(in.cg)
		if a != b || NormErr(aErr) != NormErr(bErr) {
			t.Errorf("input %d: cachelab (%q, %v), client-go (%q, %v)", i, a, aErr, b, bErr)
		}
	}
}
