package fifo_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	. "github.com/cachelab/cachelab/internal/difftest"
)

var (
	ax1 = Pod("a/x", RV(1))
	ax2 = Pod("a/x", RV(2))
	by1 = Pod("b/y", RV(1))
	cz3 = Pod("cz", RV(3))
)

// run runs a script against cachelab's and client-go's FIFO. Replace and
// Resync queue in map order in client-go, so what they queue is drained at
// once and compared as a set (see difftest.RunQueueScript).
func run(t *testing.T, ops []Op, want ...string) {
	t.Helper()
	got := RunQueueScript(t, true, FIFOPair(), ops)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("transcript (-want +got):\n%s\ngot:\n\t%s", d, strings.Join(got, "\n\t"))
	}
}

// client-go: fifo.go Add (Q1)
func TestFIFOLatestObjectKeepsItsPlace(t *testing.T) {
	run(t, []Op{Add(ax1), Add(by1), Update(ax2), Add(cz3), Pop(), Pop(), Pop()},
		"  (HasSynced is now true)",
		"pop → [a/x@2]",
		"pop → [b/y@1]",
		"pop → [cz@3]",
		"pop → error: closed",
	)
}

// client-go: fifo.go Delete, Pop (Q2)
func TestFIFODeleteLeavesTheKeyQueued(t *testing.T) {
	t.Run("Pop skips a deleted key", func(t *testing.T) {
		run(t, []Op{Add(ax1), Add(by1), Delete(ax2), Pop(), Add(ax2), Pop()},
			"  (HasSynced is now true)",
			"pop → [b/y@1]",
			"pop → [a/x@2]",
			"pop → error: closed",
		)
	})
	t.Run("a deleted key still counts toward the initial list", func(t *testing.T) {
		run(t, []Op{Replace("1", ax1), Delete(ax1), Pop(), Add(by1), Pop()},
			"pop → skipped (the queue is empty: Pop would block)",
			"pop → [b/y@1] initial",
			"  (HasSynced is now true)",
			"pop → error: closed",
		)
	})
}

// client-go: fifo.go Replace, HasSynced (Q3)
func TestFIFOReplace(t *testing.T) {
	t.Run("drops queued keys it does not list, without tombstones", func(t *testing.T) {
		run(t, []Op{Add(ax1), Replace("2", by1), Pop()},
			"  (HasSynced is now true)",
			"pop → [b/y@1]",
			"pop → error: closed",
		)
	})
	t.Run("synced once the first Replace is popped, after process", func(t *testing.T) {
		run(t, []Op{Replace("2", ax1, by1, ax2)},
			"drain (map order: compared as a set) → [a/x@2] initial",
			"drain (map order: compared as a set) → [b/y@1] initial",
			"  (HasSynced is now true)",
			"pop → error: closed",
		)
	})
	t.Run("a write before any Replace syncs at once", func(t *testing.T) {
		run(t, []Op{Delete(ax1), Replace("2", by1), Pop()},
			"  (HasSynced is now true)",
			"pop → [b/y@1]",
			"pop → error: closed",
		)
	})
}

// client-go: fifo.go Close, Pop (Q4)
func TestFIFOClose(t *testing.T) {
	run(t, []Op{Add(ax1), Close(), Add(by1), Pop(), Pop(), Pop()},
		"  (HasSynced is now true)",
		"pop → [a/x@1]",
		"pop → [b/y@1]",
		"pop → error: closed",
		"pop → error: closed",
	)
}

// Bad input gets client-go's errors and changes nothing.
func TestFIFOBadInput(t *testing.T) {
	run(t, []Op{Add(nil), Delete(Bad(1)), Replace("1", ax1, Bad(2)), PopFail(), Add(cz3), PopFail(), Pop()},
		"add nil → error: KeyError: couldn't create key for object <nil>: object has no meta: object does not implement the Object interfaces",
		"delete difftest.BadObject{ID:1} → error: KeyError: couldn't create key for object {ID:1}: object has no meta: object does not implement the Object interfaces",
		`replace [a/x@1 difftest.BadObject{ID:2}] rv="1" → error: KeyError: couldn't create key for object {ID:2}: object has no meta: object does not implement the Object interfaces`,
		"pop (process fails) → skipped (the queue is empty: Pop would block)",
		"  (HasSynced is now true)",
		"pop (process fails) → [cz@3]",
		"pop (process fails) → error: error: process failed on purpose",
		"pop → skipped (the queue is empty: Pop would block)",
		"pop → error: closed",
	)
}

var fifoOps = []OpKind{OpAdd, OpUpdate, OpDelete, OpReplace, OpResync, OpPop, OpPop, OpClose}

// FuzzFIFO runs random scripts against cachelab's and client-go's FIFO.
func FuzzFIFO(f *testing.F) {
	for _, s := range [][]byte{{}, {0, 1, 2, 3, 4, 5, 6, 7}, {3, 4, 0, 1, 0, 2, 0, 3, 2, 0, 5, 5, 5}, {0, 0xFF, 1, 2, 0xFE, 7, 5, 5}} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d := NewDecoder(data)
		RunQueueScript(t, true, FIFOPair(), d.QueueOps(fifoOps, 64))
	})
}
