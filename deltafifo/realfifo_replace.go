package deltafifo

import (
	"errors"
	"fmt"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	"github.com/cachelab/cachelab/store"
)

// Replace is what a relist calls: list is the whole truth at
// resourceVersion. In atomic mode it queues one ReplacedAll delta holding
// the (transformed) list (R3); the consumer works out what is gone. In
// non-atomic mode the queue works it out itself (R2); see queueReplaceLocked.
// The first Replace (before any other write) makes everything queued so far
// the initial list.
func (f *RealFIFO) Replace(list []any, resourceVersion string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	var err error
	if f.atomic {
		err = f.queueReplacedAllLocked(list, resourceVersion)
	} else {
		err = f.queueReplaceLocked(list)
	}
	if err != nil {
		return err
	}
	f.synced.FirstReplace(len(f.items))
	return nil
}

// queueReplacedAllLocked transforms the list into a new slice, all or
// nothing, and queues it as one delta. Keys are not checked here: the
// consumer keys each object as it applies the list.
func (f *RealFIFO) queueReplacedAllLocked(list []any, rv string) error {
	if f.transform != nil {
		out := make([]any, len(list))
		for i, obj := range list {
			var err error
			if out[i], err = f.transform(obj); err != nil {
				return err
			}
		}
		list = out
	}
	f.pushLocked(Delta{ReplacedAll, ReplacedAllInfo{ResourceVersion: rv, Objects: list}})
	return nil
}

// queueReplaceLocked queues, in this order (R2):
//
//  1. a tombstone for every queued key the list does not name and whose
//     last queued delta is not already a delete, in order of first
//     appearance, carrying the last queued object;
//  2. a tombstone for every known key neither listed nor queued, in
//     KnownObjects' order, carrying the known object (or nil);
//  3. a Replaced delta for every listed object, in list order.
//
// Deletions come first so that a consumer never sees an object replaced
// and then deleted by the same relist.
func (f *RealFIFO) queueReplaceLocked(list []any) error {
	listed := make(map[string]struct{}, len(list))
	for _, obj := range list {
		key, err := f.KeyOf(obj)
		if err != nil {
			return store.KeyError{Obj: obj, Err: err}
		}
		listed[key] = struct{}{}
	}
	queuedKeys, last, err := f.lastQueuedLocked()
	if err != nil {
		return err
	}
	for _, key := range queuedKeys {
		if _, ok := listed[key]; ok || last[key].Type == Deleted {
			continue
		}
		f.pushTombstoneLocked(key, last[key].Object)
	}
	for _, key := range f.known.ListKeys() {
		if _, ok := listed[key]; ok {
			continue
		}
		if _, ok := last[key]; ok {
			continue
		}
		obj, exists, err := f.known.GetByKey(key)
		switch {
		case err != nil:
			obj = nil
			utilruntime.HandleErrorWithLogger(f.logger, err, "Error during lookup, placing DeleteFinalStateUnknown marker without object", "key", key)
		case !exists:
			obj = nil
			utilruntime.HandleErrorWithLogger(f.logger, nil, "Key does not exist in known objects store, placing DeleteFinalStateUnknown marker without object", "key", key)
		}
		f.pushTombstoneLocked(key, obj)
	}
	for _, obj := range list {
		if err := f.appendLocked(Replaced, obj, true); err != nil {
			return fmt.Errorf("couldn't enqueue object: %w", err)
		}
	}
	return nil
}

// lastQueuedLocked returns the queued keys in order of first appearance
// and the last delta queued for each.
func (f *RealFIFO) lastQueuedLocked() ([]string, map[string]Delta, error) {
	var keys []string
	last := make(map[string]Delta, len(f.items))
	for _, d := range f.items {
		key, err := f.KeyOf(d.Object)
		if err != nil {
			return nil, nil, store.KeyError{Obj: d.Object, Err: err}
		}
		if _, seen := last[key]; !seen {
			keys = append(keys, key)
		}
		last[key] = d
	}
	return keys, last, nil
}

// pushTombstoneLocked queues Deleted{DeletedFinalStateUnknown{key, obj}}.
func (f *RealFIFO) pushTombstoneLocked(key string, obj any) {
	f.pushLocked(Delta{Deleted, DeletedFinalStateUnknown{Key: key, Obj: obj}})
}

// errResyncKey is wrapped in the error Resync returns when a known object
// cannot be keyed.
var errResyncKey = errors.New("deltafifo: known object has no key")

// Resync asks the consumer to look at its cache again. In atomic mode it
// queues one SyncAll delta (R3). In non-atomic mode it queues a Sync delta
// for every known key that has nothing queued (R4), with the known object,
// untransformed (it came from the consumer's cache).
func (f *RealFIFO) Resync() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.atomic {
		f.pushLocked(Delta{SyncAll, SyncAllInfo{}})
		return nil
	}
	queued := make(map[string]struct{}, len(f.items))
	for _, d := range f.items {
		key, err := f.KeyOf(d.Object)
		if err != nil {
			return store.KeyError{Obj: d, Err: err}
		}
		queued[key] = struct{}{}
	}
	for _, key := range f.known.ListKeys() {
		if _, ok := queued[key]; ok {
			continue // its queued deltas are newer than the cached object
		}
		obj, exists, err := f.known.GetByKey(key)
		switch {
		case err != nil:
			utilruntime.HandleErrorWithLogger(f.logger, err, "Unable to queue object for sync", "key", key)
			continue
		case !exists:
			utilruntime.HandleErrorWithLogger(f.logger, nil, "Key does not exist in known objects store, unable to queue object for sync", "key", key)
			continue
		}
		if err := f.appendLocked(Sync, obj, false); err != nil {
			// client-go wraps the lookup's (nil) error here, not this one;
			// cachelab reports the cause.
			return fmt.Errorf("couldn't queue object: %w: %w", errResyncKey, err)
		}
	}
	return nil
}
