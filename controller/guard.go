package controller

import (
	"fmt"
	"sync"
)

// rvSource is what the guard reads of the cache: the resourceVersion the
// informer's store last synced to (store.Store and client-go's
// cache.Store both have it).
type rvSource interface{ LastStoreSyncResourceVersion() string }

// guard is the staleness guard (K7, K8). A controller that writes an
// object and is asked to reconcile it again before its informer has seen
// the write reads its own past: it may redo the write, or undo it. The
// guard remembers, per key, the resourceVersion of the controller's last
// write, and holds a reconcile back while the store's last sync
// resourceVersion is older than that write.
type guard struct {
	store  rvSource
	mu     sync.Mutex
	writes map[string]string // key → resourceVersion of our last write
}

func newGuard(s rvSource) *guard { return &guard{store: s, writes: map[string]string{}} }

// wrote remembers that this controller's write of key produced rv.
func (g *guard) wrote(key, rv string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.writes[key] = rv
}

// stale reports whether key must wait: the store has not yet synced to
// the last write this controller made of it. Once the store has, or if
// the two versions cannot be compared (a store that does not report one,
// as client-go's does not with AtomicFIFO off; a malformed one), the
// write is forgotten and the reconcile goes ahead: the guard only holds
// back what it can prove stale.
func (g *guard) stale(key string) (bool, string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	written, ok := g.writes[key]
	if !ok {
		return false, ""
	}
	synced := g.store.LastStoreSyncResourceVersion()
	order, err := CompareResourceVersions(synced, written)
	if err == nil && order < 0 {
		return true, fmt.Sprintf("store@%s < wrote@%s", synced, written)
	}
	delete(g.writes, key)
	return false, ""
}
