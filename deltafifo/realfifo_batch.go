package deltafifo

import "github.com/cachelab/cachelab/fifo"

// ProcessBatchFunc processes a batch of deltas popped together: at least
// two, each for a different key, all of batchable types.
type ProcessBatchFunc func(deltas []Delta, isInInitialList bool) error

// batchable reports whether a delta of type t may share a batch: the types
// that carry one object. ReplacedAll, SyncAll and Bookmark act on the
// whole cache and are processed alone.
func batchable(t DeltaType) bool {
	switch t {
	case Sync, Replaced, Added, Updated, Deleted:
		return true
	}
	return false
}

// PopBatch pops the longest run of deltas at the head of the queue that can
// be processed together (R6), and hands it to processBatch, or to
// processSingle when the run is one delta long. A run:
//
//   - holds at most 1000 deltas, all batchable, each for a different key
//     (a repeated key ends it, so one key's changes stay in order);
//   - never crosses the end of the initial list, so isInInitialList is
//     the same for all of it;
//   - includes a delta that cannot be keyed, and ends there;
//   - is a non-batchable delta alone, if one is at the head.
//
// It returns process's error, or fifo.ErrClosed on a closed, empty queue.
// The initial-list count drops by the run's length after processing.
func (f *RealFIFO) PopBatch(processBatch ProcessBatchFunc, processSingle fifo.PopProcessFunc) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.waitLocked(); err != nil {
		return err
	}
	inInitialList := !f.synced.Synced()
	n := f.runLengthLocked()
	batch := make([]Delta, n)
	copy(batch, f.items[:n])
	clear(f.items[:n]) // let the objects be collected once processed
	f.items = f.items[n:]
	f.popped += n
	defer f.poppedLocked(n)
	f.metrics.QueuedItems.Set(float64(len(f.items)))
	if n == 1 {
		return f.processLocked(func() error { return processSingle(Deltas{batch[0]}, inInitialList) })
	}
	return f.processLocked(func() error { return processBatch(batch, inInitialList) })
}

// runLengthLocked is how many deltas at the head form the next run; at
// least one.
func (f *RealFIFO) runLengthLocked() int {
	limit := min(len(f.items), batchSize)
	if r := f.synced.Remaining(); r > 0 {
		limit = min(limit, r)
	}
	if !batchable(f.items[0].Type) {
		return 1
	}
	seen := make(map[string]struct{}, limit)
	for i := 0; i < limit; i++ {
		d := f.items[i]
		if !batchable(d.Type) {
			return i
		}
		key, err := f.KeyOf(d)
		if err != nil {
			return i + 1 // pop the broken delta with the run, and stop
		}
		if _, dup := seen[key]; dup {
			return i
		}
		seen[key] = struct{}{}
	}
	return limit
}
