package deltafifo

import (
	"errors"

	"github.com/cachelab/cachelab/store"
)

// DeltaType says what happened to an object.
type DeltaType string

// The eight kinds of delta. The first five carry one object and can be
// batched (see RealFIFO.PopBatch); the last three carry a whole-queue
// event and are always processed alone.
const (
	// Added: a watch said the object was created.
	Added DeltaType = "Added"
	// Updated: a watch said the object changed.
	Updated DeltaType = "Updated"
	// Deleted: a watch said the object was deleted, or a relist no longer
	// contained it (then the object is a DeletedFinalStateUnknown).
	Deleted DeltaType = "Deleted"
	// Replaced: a relist contained the object (DeltaFIFO with
	// EmitDeltaTypeReplaced, and non-atomic RealFIFO).
	Replaced DeltaType = "Replaced"
	// Sync: a periodic resync, or a relist in a DeltaFIFO without
	// EmitDeltaTypeReplaced, handed the object to the consumer again.
	Sync DeltaType = "Sync"
	// ReplacedAll: a whole relist as one delta; the object is a
	// ReplacedAllInfo (atomic RealFIFO).
	ReplacedAll DeltaType = "ReplacedAll"
	// SyncAll: a whole resync as one delta; the object is a SyncAllInfo
	// (atomic RealFIFO).
	SyncAll DeltaType = "SyncAll"
	// Bookmark: the watch reported progress; the object is a BookmarkInfo
	// (atomic RealFIFO with EmitDeltaTypeBookmark).
	Bookmark DeltaType = "Bookmark"
)

// Delta is one thing that happened to one object (or, for the whole-queue
// types, to all of them).
type Delta struct {
	Type   DeltaType
	Object any
}

// Deltas is what DeltaFIFO pops for one key: everything that happened to
// it since it was last popped, oldest first. RealFIFO pops Deltas of
// length one.
type Deltas []Delta

// Oldest returns the first delta, or nil if there is none.
func (d Deltas) Oldest() *Delta {
	if len(d) > 0 {
		return &d[0]
	}
	return nil
}

// Newest returns the last delta, or nil if there is none.
func (d Deltas) Newest() *Delta {
	if n := len(d); n > 0 {
		return &d[n-1]
	}
	return nil
}

// DeletedFinalStateUnknown is the tombstone type; see
// store.DeletedFinalStateUnknown.
type DeletedFinalStateUnknown = store.DeletedFinalStateUnknown

// TransformFunc rewrites an object as it enters a queue; see
// store.TransformFunc.
type TransformFunc = store.TransformFunc

// ReplacedAllInfo is the object of a ReplacedAll delta: the whole list of a
// relist (already transformed) and the resourceVersion it was read at.
type ReplacedAllInfo struct {
	ResourceVersion string
	Objects         []any
}

// SyncAllInfo is the object of a SyncAll delta. It carries nothing: the
// consumer resyncs what it has cached.
type SyncAllInfo struct{}

// BookmarkInfo is the object of a Bookmark delta.
type BookmarkInfo struct {
	ResourceVersion string
}

// KeyListerGetter is what a queue needs to know about its consumer's cache
// (the "known objects"): which keys it holds, and the object for a key.
// An informer's indexer is one. Declared here, where it is used.
type KeyListerGetter interface {
	ListKeys() []string
	GetByKey(key string) (value any, exists bool, err error)
}

// ErrZeroLengthDeltas is the cause of the KeyError returned for an empty
// Deltas, which has no object to key.
var ErrZeroLengthDeltas = errors.New("0 length Deltas object; can't get key")

// keyOf keys an object the way both queues do: a Deltas by its newest
// object, a tombstone by the key it carries, anything else by keyFunc.
func keyOf(keyFunc store.KeyFunc, obj any) (string, error) {
	if d, ok := obj.(Deltas); ok {
		if len(d) == 0 {
			return "", store.KeyError{Obj: obj, Err: ErrZeroLengthDeltas}
		}
		obj = d.Newest().Object
	}
	if d, ok := obj.(DeletedFinalStateUnknown); ok {
		return d.Key, nil
	}
	return keyFunc(obj)
}

// isTombstone reports whether obj is a DeletedFinalStateUnknown. Tombstones
// are never transformed: their object already went through the
// transformer when it first entered the queue or the store (D8).
func isTombstone(obj any) bool {
	_, ok := obj.(DeletedFinalStateUnknown)
	return ok
}

// transformIf runs transform on obj unless there is none, the caller says
// the object is already transformed, or obj is a tombstone.
func transformIf(transform TransformFunc, wanted bool, obj any) (any, error) {
	if transform == nil || !wanted || isTombstone(obj) {
		return obj, nil
	}
	return transform(obj)
}
