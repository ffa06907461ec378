package heap_test

import (
	"testing"

	. "github.com/cachelab/cachelab/internal/difftest"
)

// client-go: heap.go Add, Update, Pop (B1)
func TestAddReplacesAndMoves(t *testing.T) {
	run(t, "prio", []hop{
		add(j("a", 10)), add(j("b", 1)), add(j("c", 11)), add(j("d", 30)),
		add(j("a", 13)), // a moves behind c
		pop(), pop(),
		update(j("a", 0)), // back to the front
		update(j("e", 5)), // an unknown key is added
		get(j("a", 99)), pop(), pop(), pop(), pop(),
	},
		"pop → b:1",
		"pop → c:11",
		"get a:99 → a:0",
		"pop → a:0",
		"pop → e:5",
		"pop → d:30",
		"pop → blocks (empty and open: not called)",
	)
}

// client-go: heap.go AddIfNotPresent (B2)
func TestAddIfNotPresentKeepsTheStoredObject(t *testing.T) {
	run(t, "prio", []hop{
		addIfNotPresent(j("a", 10)), addIfNotPresent(j("b", 1)),
		addIfNotPresent(j("a", 0)), // a stays at 10, behind b
		get(j("a", -1)), pop(),
		addIfNotPresent(j("b", 20)), // b was popped: added again
		pop(), pop(),
	},
		"get a:-1 → a:10",
		"pop → b:1",
		"pop → a:10",
		"pop → b:20",
	)
}

// client-go: heap.go Pop through container/heap (B3). Equal priorities
// do not come out in the order they went in: the root goes first, then
// the last leaf, which Pop swapped to the root and nothing sifted down.
func TestEqualPrioritiesPopInHeapOrder(t *testing.T) {
	t.Run("a..g at one priority", func(t *testing.T) {
		var ops []hop
		for _, n := range []string{"a", "b", "c", "d", "e", "f", "g"} {
			ops = append(ops, add(j(n, 1)))
		}
		for range 7 {
			ops = append(ops, pop())
		}
		run(t, "prio", ops,
			"pop → a:1", "pop → g:1", "pop → f:1", "pop → e:1", "pop → d:1", "pop → c:1", "pop → b:1",
		)
	})
	t.Run("a tie broken by Update and Delete history", func(t *testing.T) {
		run(t, "prio", []hop{
			add(j("a", 2)), add(j("b", 2)), add(j("c", 1)), add(j("d", 2)), add(j("e", 2)),
			update(j("c", 2)), del(j("b", 0)), add(j("f", 2)),
			pop(), pop(), pop(), pop(), pop(),
		},
			"pop → c:2", "pop → f:2", "pop → d:2", "pop → a:2", "pop → e:2",
		)
	})
	t.Run("a non-strict order", func(t *testing.T) {
		run(t, "prio<=", []hop{
			add(j("a", 1)), add(j("b", 1)), add(j("c", 1)), add(j("d", 0)), add(j("e", 1)),
			pop(), pop(), pop(), pop(), pop(),
		},
			"pop → d:0", "pop → b:1", "pop → c:1", "pop → e:1", "pop → a:1",
		)
	})
}

// client-go: heap.go Close, Add, AddIfNotPresent, BulkAdd, Delete, Pop (B5)
func TestClosedHeap(t *testing.T) {
	run(t, "prio", []hop{
		add(j("a", 2)), add(j("b", 1)), closeHeap(),
		add(j("c", 0)), update(j("a", 0)), addIfNotPresent(j("c", 0)), bulkAdd(j("c", 0)),
		add(Bad(1)),             // keyed before the closed check: KeyError
		addIfNotPresent(Bad(1)), // likewise
		bulkAdd(Bad(1)),         // the closed check comes first
		get(j("a", 0)), del(j("c", 0)), pop(), del(j("a", 0)), pop(), closeHeap(), pop(),
	},
		"add c:0 → error: error: heap is closed",
		"update a:0 → error: error: heap is closed",
		"addifnotpresent c:0 → error: error: heap is closed",
		"bulkadd [c:0] → error: error: heap is closed",
		"add {1} → error: KeyError: couldn't create key for object {ID:1}: not a job: {1}",
		"addifnotpresent {1} → error: KeyError: couldn't create key for object {ID:1}: not a job: {1}",
		"bulkadd [{1}] → error: error: heap is closed",
		"get a:0 → a:2",
		"delete c:0 → error: error: object not found",
		"pop → b:1",
		"pop → error: error: heap is closed",
		"pop → error: error: heap is closed",
	)
}

// client-go: heap.go BulkAdd (B6)
func TestBulkAdd(t *testing.T) {
	run(t, "prio", []hop{
		bulkAdd(j("a", 3), j("b", 2), j("a", 1)), // a listed twice: the last wins
		bulkAdd(j("c", 0), Bad(7), j("d", -1)),   // stops at Bad(7), keeps c
		listKeys(), pop(), pop(), pop(),
		bulkAdd(), // nothing to add: not an error
	},
		"bulkadd [c:0 {7} d:-1] → error: KeyError: couldn't create key for object {ID:7}: not a job: {7}",
		"listkeys → [a b c]",
		"pop → c:0",
		"pop → a:1",
		"pop → b:2",
	)
}

// client-go: heap.go Delete, Get, GetByKey, List, ListKeys (B7)
func TestFindByKey(t *testing.T) {
	run(t, "prio,name", []hop{
		add(j("b", 1)), add(j("a", 1)), add(j("c", 0)),
		get(j("b", 100)), getByKey("c"), getByKey("zz"), get(j("zz", 0)), get(Bad(2)),
		list(), listKeys(),
		del(j("c", 100)), del(j("c", 0)), del(Bad(3)),
		list(), pop(), pop(),
	},
		"get b:100 → b:1",
		"getbykey c → c:0",
		"getbykey zz → not found",
		"get zz:0 → not found",
		"get {2} → error: KeyError: couldn't create key for object {ID:2}: not a job: {2}",
		"list → [a:1 b:1 c:0]",
		"listkeys → [a b c]",
		"delete c:0 → error: error: object not found",
		"delete {3} → error: KeyError: couldn't create key for object {ID:3}: not a job: {3}",
		"list → [a:1 b:1]",
		"pop → a:1",
		"pop → b:1",
	)
}
