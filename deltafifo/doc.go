// Package deltafifo holds the two queues between an informer's reflector
// and its processing loop, and the deltas they carry.
//
// # The problem
//
// A plain FIFO (package fifo) keeps only an object's latest state, so a
// consumer never hears that something was deleted, nor what happened in
// between. An informer needs both: its handlers are OnAdd, OnUpdate and
// OnDelete. So these queues carry deltas: "Added x", "Updated x",
// "Deleted x".
//
// # DeltaFIFO: the classic stack
//
// DeltaFIFO keeps, per key, every delta since the key was last popped, and
// pops them together. It is what most tutorials and the sample-controller
// diagram show.
//
//	Add(a@1) Add(b@1) Update(a@2) Delete(a@3)
//	queue: [a, b]   items: {a: [Added a@1, Updated a@2, Deleted a@3], b: [Added b@1]}
//	Pop → [Added a@1, Updated a@2, Deleted a@3]
//
// Its rules:
//
//   - D1: a key pops at the place it got when first queued.
//   - D2: two Deleted deltas in a row collapse into one.
//   - D3: a Delete nobody knows about (not queued, not in KnownObjects) is
//     dropped.
//   - D4: Replace (a relist) queues Sync (or Replaced) for each listed
//     object, and a DeletedFinalStateUnknown tombstone for each object that
//     was queued or known but is no longer listed: a delete that happened
//     while the watch was down.
//   - D5: Resync re-queues every known object that has nothing queued.
//   - D6: HasSynced turns true once the first Replace has been popped; the
//     count drops before process runs.
//   - D7, D8: process errors are returned, never requeued; the transformer
//     runs once per object on entry.
//
// # RealFIFO: the default stack
//
// RealFIFO (client-go's default since InOrderInformers) keeps one delta per
// event in arrival order and merges nothing (R1): every event reaches the
// consumer, in the order the watch sent it, including deletes of objects it
// never saw. In atomic mode (the AtomicFIFO gate, on by default) a relist
// is a single ReplacedAll delta, a resync a single SyncAll, and a watch
// bookmark a Bookmark delta (R3); the consumer applies each to its cache in
// one step, which lets the queue release its lock while the consumer works
// (UnlockWhileProcessing). PopBatch hands over runs of up to 1000 deltas for
// distinct keys, written to the cache in one transaction (R6).
//
//	Add(a@1) Add(b@1) Update(a@2) Replace([b@3], rv=9)
//	items: [Added a@1, Added b@1, Updated a@2, ReplacedAll{rv=9: b@3}]
//	PopBatch → [Added a@1, Added b@1]  (stops: a repeats)
//	PopBatch → [Updated a@2]           (stops: ReplacedAll is never batched)
//	PopBatch → [ReplacedAll{rv=9: b@3}]
//
// # Invariants shared by both
//
//   - A key is what the key function gives for the delta's object; a
//     tombstone carries its key, a Deltas is keyed by its newest delta.
//   - Pop blocks until something is queued; after Close it drains, then
//     returns fifo.ErrClosed. Writes after Close are still accepted.
//   - process runs under the queue's lock (except RealFIFO with
//     UnlockWhileProcessing), so calling HasSynced from process deadlocks.
//     Done is the lock-free way to ask.
//
// # Names, logs and metrics
//
// A queue has a name (Name: "DeltaFIFO", "RealFIFO", or the one given),
// which names its logger, where it reports a consumer's cache that fails
// a lookup or lost a key it listed (D9, R9). A RealFIFO with a reserved
// Identifier takes that name and publishes its depth after every change
// and the time each pop's processing takes (R8; see package metrics); a
// queued Bookmark, as in client-go, leaves the depth gauge as it was.
// DeltaFIFO publishes no metrics.
//
// # Mirrors client-go
//
// delta_fifo.go (DeltaFIFO, Delta, Deltas, DeletedFinalStateUnknown) and
// the_real_fifo.go (RealFIFO, ReplacedAllInfo, SyncAllInfo, BookmarkInfo) in
// k8s.io/client-go/tools/cache, v0.37.2. Differences in shape: one
// constructor each; the tombstone type lives in package store (the
// deletion-handling key function needs it) and is aliased here; a broken
// internal invariant panics where client-go logs and carries on; when a
// non-atomic RealFIFO's Resync cannot key a known object, cachelab's error
// names that cause where client-go's wraps a nil error.
package deltafifo
