// Package fifo is the simplest queue a reflector can feed: one slot per
// key, holding the newest object, popped in the order keys first arrived.
//
// # The problem
//
// A watch delivers changes faster than a slow consumer handles them. If
// only the latest state of each object matters, the queue can drop every
// version but the newest: ten updates to one object cost one process call.
//
//	Add(a@1) Add(b@1) Update(a@2)      queue: [a, b]     items: {a: a@2, b: b@1}
//	Pop → a@2 (a kept its place)       queue: [b]
//
// # Invariants
//
//   - Q1: Add and Update keep only the latest object, and the key keeps the
//     place it got when first queued.
//   - Q2: Delete removes the object but leaves its key queued; Pop skips it.
//     A deleted object is simply gone: nobody hears about the delete, which
//     is why informers use DeltaFIFO or RealFIFO instead.
//   - Q3: Replace makes a list the whole content (no tombstones for what it
//     drops). HasSynced turns true once the first Replace's objects have all
//     been popped and processed, or at once if any other write came first.
//   - Q4: after Close, Pop returns what is left, then ErrClosed.
//
// Pop runs the process function under the queue's lock: nothing is queued
// meanwhile, and process must not call back into the queue (read Done
// instead of HasSynced).
//
// # Mirrors client-go
//
// fifo.go (FIFO) in k8s.io/client-go/tools/cache, v0.37.2. Replace queues in
// list order and Resync in sorted order, where client-go uses map order (a
// random one); cachelab's order is one client-go can produce, and it keeps
// traces stable. The differential tests compare those pops as a set.
package fifo
