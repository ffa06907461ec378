// Package heap is a keyed priority queue: at most one object per key,
// popped smallest first by a comparison the caller gives, with Pop
// waiting while the queue is empty.
//
// # The problem
//
// A scheduler wants "the most urgent pending pod next", and a pod that
// changes while it waits (its priority raised, say) must move to its new
// place rather than be queued twice. A plain priority queue cannot find
// an entry to move it; a map cannot say which entry is smallest. Heap is
// both: a map from key to entry, and a binary heap of those entries.
//
// # The pieces
//
//	          key function              less function
//	obj ──► "ns/name" ──► items ──► queue (a binary heap, smallest at 0)
//	                   key → entry      [ns/b  ns/a  ns/c ...]
//	                   {obj, index} ◄───── index is the entry's place
//
// Each entry knows its place in the heap, so replacing an object moves it
// up or down in O(log n) (heap.Fix), and a delete removes it in O(log n)
// (heap.Remove). The sifting is container/heap's, driven by the same calls
// as client-go's, because only the same algorithm given the same history
// pops equal objects in the same order (B3).
//
// # Invariants
//
//   - B1: one object per key; Add (and Update, the same) replaces a
//     stored key's object and moves it to where its new value belongs.
//   - B2: AddIfNotPresent leaves a stored key's object and place alone.
//   - B3: Pop returns the smallest object; equal ones come out in the
//     order container/heap's sifting leaves them, not the order they
//     were added: a..g added with one priority pop a g f e d c b.
//   - B4: Pop waits while the heap is empty and open. Every Add,
//     Update, AddIfNotPresent and successful BulkAdd wakes every waiting
//     Pop; the first to get the lock pops, the others wait again.
//   - B5: after Close, the adds fail with "heap is closed", Pop drains
//     what is left and then fails the same way; Delete and the reads
//     still work.
//   - B6: BulkAdd adds a list under one lock; an object that cannot be
//     keyed stops it, keeps what came before, and wakes nobody.
//   - B7: Delete, Get and GetByKey find an object by key alone; Delete
//     of a key not stored fails with "object not found". List and
//     ListKeys return everything stored, in key order.
//
// Costs: Add, Update, AddIfNotPresent, Delete and Pop are O(log n)
// comparisons; Get and GetByKey O(1); List and ListKeys O(n log n) (they
// sort by key). Pop never allocates.
//
// # Mirrors client-go
//
// heap.go (Heap, NewHeap, LessFunc) in k8s.io/client-go/tools/cache,
// v0.37.2. It is a package of its own because it is a concept of its own
// (a queue, but neither a FIFO nor a Store); its keys and their errors are
// package store's (store.KeyFunc, store.KeyError), as client-go's are
// tools/cache's. Every rule above is checked against client-go's Heap by
// differential tests and a fuzzer (REFERENCE.md, B1–B7).
//
// Differences in shape:
//   - the closed heap and the missing key are the errors ErrClosed and
//     ErrNotFound, where client-go makes a new error with the same text
//     each time;
//   - the heap keeps each entry's pointer beside its key in heap order,
//     so that a comparison or a swap looks nothing up in the map;
//   - client-go's Pop can fail with "object was removed from heap data",
//     a state its map and queue never reach; cachelab has no such error.
//
// Differences in behaviour: List and ListKeys come in key order, where
// client-go's come in map order (which promises none): key order is one
// of the orders client-go can produce, and it makes traces stable.
package heap
