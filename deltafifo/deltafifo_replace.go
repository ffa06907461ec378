package deltafifo

import (
	"fmt"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	"github.com/cachelab/cachelab/store"
)

// Replace is what a relist calls: list is the whole truth now. It queues,
// in this order (D4):
//
//  1. a Replaced delta (Sync without EmitDeltaTypeReplaced) for every
//     listed object, in list order;
//  2. a tombstone (Deleted{DeletedFinalStateUnknown}) for every queued key
//     the list does not name, carrying the newest object queued for it;
//  3. with KnownObjects, a tombstone for every known key that is neither
//     listed nor queued, carrying the known object (or nil).
//
// A delta for a key that is already queued joins that key's deltas and
// pops at the key's place; only new keys get new places. The first Replace
// (before any other write) defines the initial list HasSynced waits for.
// The resourceVersion is ignored: DeltaFIFO has nowhere to put it.
//
// On an error Replace stops where it is: deltas queued so far stay queued.
func (f *DeltaFIFO) Replace(list []any, _ string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	listed, err := f.queueListedLocked(list)
	if err != nil {
		return err
	}
	tombstones := f.tombstoneUnlistedQueuedLocked(listed)
	tombstones += f.tombstoneUnlistedKnownLocked(listed)
	f.synced.FirstReplace(len(listed) + tombstones)
	return nil
}

// queueListedLocked is step 1. It returns the set of listed keys.
func (f *DeltaFIFO) queueListedLocked(list []any) (map[string]struct{}, error) {
	t := Sync
	if f.emitReplaced {
		t = Replaced
	}
	listed := make(map[string]struct{}, len(list))
	for _, obj := range list {
		key, err := f.KeyOf(obj)
		if err != nil {
			return nil, store.KeyError{Obj: obj, Err: err}
		}
		listed[key] = struct{}{}
		// A relisted object is new to the queue, so it is transformed even
		// when queued as Sync (D8).
		if err := f.enqueueLocked(t, obj, true); err != nil {
			return nil, fmt.Errorf("couldn't enqueue object: %v", err)
		}
	}
	return listed, nil
}

// tombstoneUnlistedQueuedLocked is step 2. These keys are already queued,
// so the order in which they are visited changes nothing.
func (f *DeltaFIFO) tombstoneUnlistedQueuedLocked(listed map[string]struct{}) int {
	n := 0
	for key, deltas := range f.items {
		if _, ok := listed[key]; ok {
			continue
		}
		last := deltas.Newest().Object
		if d, ok := last.(DeletedFinalStateUnknown); ok {
			last = d.Obj // do not wrap a tombstone in a tombstone
		}
		f.mustEnqueueTombstoneLocked(key, last)
		n++
	}
	return n
}

// tombstoneUnlistedKnownLocked is step 3, in KnownObjects' key order.
func (f *DeltaFIFO) tombstoneUnlistedKnownLocked(listed map[string]struct{}) int {
	if f.known == nil {
		return 0
	}
	n := 0
	for _, key := range f.known.ListKeys() {
		if _, ok := listed[key]; ok || len(f.items[key]) > 0 {
			continue
		}
		obj, exists, err := f.known.GetByKey(key)
		switch {
		case err != nil:
			obj = nil // the tombstone says "deleted" even without a last state
			utilruntime.HandleErrorWithLogger(f.logger, err, "Unexpected error during lookup, placing DeleteFinalStateUnknown marker without object", "key", key)
		case !exists:
			obj = nil
			f.logger.Info("Key does not exist in known objects store, placing DeleteFinalStateUnknown marker without object", "key", key)
		}
		f.mustEnqueueTombstoneLocked(key, obj)
		n++
	}
	return n
}

// mustEnqueueTombstoneLocked queues a tombstone, which cannot fail: its
// key is given and it is never transformed.
func (f *DeltaFIFO) mustEnqueueTombstoneLocked(key string, obj any) {
	if err := f.enqueueLocked(Deleted, DeletedFinalStateUnknown{Key: key, Obj: obj}, false); err != nil {
		panic(fmt.Sprintf("deltafifo: invariant broken: a tombstone could not be queued: %v", err))
	}
}

// Resync queues a Sync delta for every known key that has no queued deltas
// (D5): "here is what you already have, look at it again". Keys with
// queued deltas are skipped, since their queued deltas are newer than the
// known object. Without KnownObjects it does nothing. The objects are not
// transformed: they come from the consumer's cache, transformed already.
func (f *DeltaFIFO) Resync() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.known == nil {
		return nil
	}
	for _, key := range f.known.ListKeys() {
		if err := f.syncKeyLocked(key); err != nil {
			return err
		}
	}
	return nil
}

func (f *DeltaFIFO) syncKeyLocked(key string) error {
	obj, exists, err := f.known.GetByKey(key)
	switch {
	case err != nil:
		utilruntime.HandleErrorWithLogger(f.logger, err, "Unexpected error during lookup, unable to queue object for sync", "key", key)
		return nil
	case !exists: // vanished from the cache meanwhile: nothing to resync
		f.logger.Info("Key does not exist in known objects store, unable to queue object for sync", "key", key)
		return nil
	}
	id, err := f.KeyOf(obj)
	if err != nil {
		return store.KeyError{Obj: obj, Err: err}
	}
	if len(f.items[id]) > 0 {
		return nil
	}
	if err := f.enqueueLocked(Sync, obj, false); err != nil {
		return fmt.Errorf("couldn't queue object: %v", err)
	}
	return nil
}
