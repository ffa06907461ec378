package store

import (
	"sync"

	"github.com/cachelab/cachelab/metrics"
)

// ThreadSafeStore is a map from key to object with indices, guarded by one
// read-write lock. It knows nothing about how keys are made: Cache computes
// them and calls it. It also remembers a resourceVersion: the one of the
// last object written, or the one a Replace or Bookmark named.
//
// It mirrors client-go's threadSafeMap (thread_safe_store.go). Objects are
// shared, not copied: callers must not modify what they store or read.
type ThreadSafeStore struct {
	mu    sync.RWMutex
	items map[string]any
	idx   indices
	rv    string // the remembered resourceVersion (S4)
	// rvGauge hears rv whenever it is remembered and is a number (S6);
	// nil for a store without a reserved name, which then does not parse
	// rv at every write.
	rvGauge metrics.GaugeMetric

	// order is the objects in key order for List and ListKeys: every
	// write notes its key there (holding mu); the next list catches up
	// (holding mu for reading, and orderMu, since lists run side by side).
	orderMu sync.Mutex
	order   keyOrder
}

// NewThreadSafeStore returns an empty store with the given indices. A
// reserved id publishes the remembered resourceVersion to p's gauge (see
// package metrics; p nil means the process's provider).
func NewThreadSafeStore(indexers Indexers, id metrics.InformerNameAndResource, p metrics.Provider) *ThreadSafeStore {
	s := &ThreadSafeStore{items: map[string]any{}, idx: newIndices(indexers)}
	if id.Reserved() {
		s.rvGauge = metrics.ForStore(id, p)
	}
	return s
}

// rememberLocked remembers rv and publishes it (client-go sets the gauge
// under the same lock, so its values come in the order of the writes).
func (s *ThreadSafeStore) rememberLocked(rv string) {
	s.rv = rv
	if s.rvGauge == nil {
		return
	}
	if v, ok := metrics.ResourceVersionValue(rv); ok {
		s.rvGauge.Set(v)
	}
}

// Add stores obj under key; it is the same as Update.
func (s *ThreadSafeStore) Add(key string, obj any) { s.Update(key, obj) }

// Update stores obj under key, re-indexes it, and remembers its
// resourceVersion (an object without metadata leaves the remembered one).
func (s *ThreadSafeStore) Update(key string, obj any) {
	rv, hasMeta := resourceVersionOf(obj)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.putLocked(key, obj)
	if hasMeta {
		s.rememberLocked(rv)
	}
}

// Delete removes key. obj is the object the caller deleted: when it has
// metadata its resourceVersion is remembered; a nil obj or a tombstone
// leaves the remembered one as it was.
func (s *ThreadSafeStore) Delete(key string, obj any) {
	rv, hasMeta := resourceVersionOf(obj)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deleteLocked(key)
	if hasMeta { // false for nil and for a tombstone
		s.rememberLocked(rv)
	}
}

// putLocked stores obj, then indexes it. An IndexFunc that panics leaves
// obj stored and the indices as they were (client-go: updateLocked stores
// first; its indices are updated one by one, in map order, so those
// before the panicking one have changed).
func (s *ThreadSafeStore) putLocked(key string, obj any) {
	old := s.items[key]
	s.items[key] = obj
	s.order.touch(key, len(s.items))
	var buf [4]indexChange
	apply(s.idx.byName, key, s.idx.plan(key, old, obj, buf[:0]))
}

func (s *ThreadSafeStore) deleteLocked(key string) {
	old, ok := s.items[key]
	if !ok {
		return
	}
	var buf [4]indexChange
	changes := s.idx.plan(key, old, nil, buf[:0])
	delete(s.items, key)
	s.order.touch(key, len(s.items))
	apply(s.idx.byName, key, changes)
}

// Get returns the object stored under key.
func (s *ThreadSafeStore) Get(key string) (obj any, exists bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	obj, exists = s.items[key]
	return obj, exists
}

// List returns every stored object, in key order.
//
// client-go's List is in map order, which promises nothing; cachelab's
// is sorted, one of the orders client-go can produce, so that whatever
// iterates a store (a relist's deletion detection, a resync, a late
// handler's catch-up) does it the same way on every run and a trace is
// byte-stable. The order costs the writes nothing and a list little: see
// keyOrder.
func (s *ThreadSafeStore) List() []any {
	s.mu.RLock()
	defer s.mu.RUnlock()
	entries := s.orderedRLocked()
	out := make([]any, len(entries))
	for i := range entries {
		out[i] = entries[i].obj
	}
	return out
}

// ListKeys returns every key, in key order (see List).
func (s *ThreadSafeStore) ListKeys() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	entries := s.orderedRLocked()
	out := make([]string, len(entries))
	for i := range entries {
		out[i] = entries[i].key
	}
	return out
}

// orderedRLocked is the stored entries in key order, caught up with the
// writes since the last list. The caller holds mu for reading and must
// not modify the slice.
func (s *ThreadSafeStore) orderedRLocked() []entry {
	s.orderMu.Lock()
	defer s.orderMu.Unlock()
	s.order.catchUp(s.items)
	return s.order.entries
}

// Len is the number of stored objects.
func (s *ThreadSafeStore) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.items)
}

// Replace swaps the whole content for items (which the store now owns),
// rebuilds every index, and remembers resourceVersion.
func (s *ThreadSafeStore) Replace(items map[string]any, resourceVersion string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.items = items
	s.order.drop()
	s.rememberLocked(resourceVersion)
	s.idx.rebuild(items)
}

// Bookmark remembers rv without changing any object. A watch bookmark says
// "you are up to date as of rv", and this is where an informer records it.
func (s *ThreadSafeStore) Bookmark(rv string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rememberLocked(rv)
}

// ResourceVersion is the remembered resourceVersion.
func (s *ThreadSafeStore) ResourceVersion() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.rv
}
