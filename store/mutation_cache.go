package store

import (
	"errors"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	utilcache "k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// MutationCache answers reads from an informer's store, or from the
// controller's own recent writes where those are newer: a controller that
// has just written an object reads its write back at once, instead of the
// version from before it that the informer still holds (M1). It
// compares resourceVersions as integers. Implementations are safe for
// concurrent use. It mirrors client-go's MutationCache
// (mutation_cache.go).
//
// Call Mutation with what a write returned; call OnAddOrUpdate and
// OnDelete from the informer's event handlers, so that a write the
// informer has seen, or an object it has seen deleted, stops being
// answered from the mutation cache before its TTL ends (M5, M6).
type MutationCache interface {
	// GetByKey returns the newer of the store's object and the cache's
	// own copy (M2, M3).
	GetByKey(key string) (any, bool, error)
	// ByIndex is the indexer's ByIndex, each object replaced by the
	// cache's newer copy, and with IncludeAdds the cache's own objects the
	// indexer does not have yet (M4).
	ByIndex(indexName, indexKey string) ([]any, error)
	// Mutation remembers obj, the result of a write, for the TTL (M1).
	Mutation(obj any)
	// OnAddOrUpdate forgets the cache's copy once the informer has an
	// object at least as new (M5).
	OnAddOrUpdate(obj runtime.Object)
	// OnDelete forgets the cache's copy of a deleted object and remembers
	// the deletion, so a late Mutation of it is ignored (M6).
	OnDelete(obj runtime.Object)

	// internal keeps implementations in this package, as client-go's
	// does, so that methods can be added.
	internal()
}

// ResourceVersionComparator compares two objects' resourceVersions: -1,
// 0 or 1 (client-go: ResourceVersionComparator).
type ResourceVersionComparator interface {
	CompareResourceVersion(lhs, rhs runtime.Object) int
}

// MutationCacheOptions configures a MutationCache (client-go:
// MutationCacheOptions; Clock is cachelab's).
type MutationCacheOptions struct {
	// Indexer answers ByIndex; with none, ByIndex returns an error.
	Indexer Indexer
	// TTL is how long the cache answers with a copy after Mutation; 0
	// means 5 minutes.
	TTL time.Duration
	// IncludeAdds makes GetByKey and ByIndex answer with copies of
	// objects the store does not have (yet, or any more: a copy of an
	// object deleted meanwhile is answered until OnDelete or the TTL).
	IncludeAdds bool
	// MaxCacheSize is how many copies the cache keeps, the least recently
	// used going first; 0 means 100.
	MaxCacheSize int
	// Clock decides when a copy's TTL has passed; nil means the real
	// clock. (Not in client-go, whose cache reads time.Now.)
	Clock clock.PassiveClock
}

// The defaults client-go fills in for a zero TTL and MaxCacheSize.
const (
	defaultMutationTTL       = 5 * time.Minute
	defaultMutationCacheSize = 100
)

// errNoIndexer is what ByIndex returns without an indexer, in client-go's
// words.
var errNoIndexer = errors.New("no indexer has been provided to the mutation cache")

// NewIntegerResourceVersionMutationCacheWithOptions returns a
// MutationCache over backingCache (usually an informer's store) for
// objects whose resourceVersions are integers that grow with every write,
// as etcd's do. A negative MaxCacheSize panics.
func NewIntegerResourceVersionMutationCacheWithOptions(logger klog.Logger, backingCache Store, options MutationCacheOptions) MutationCache {
	size, ttl, clk := options.MaxCacheSize, options.TTL, options.Clock
	if size == 0 {
		size = defaultMutationCacheSize
	}
	if ttl == 0 {
		ttl = defaultMutationTTL
	}
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &mutationCache{
		logger:        logger,
		backingCache:  backingCache,
		indexer:       options.Indexer,
		mutationCache: utilcache.NewLRUExpireCacheWithClock(size, clk),
		includeAdds:   options.IncludeAdds,
		ttl:           ttl,
		comparator:    integerVersions{},
	}
}

// NewIntegerResourceVersionMutationCache is
// NewIntegerResourceVersionMutationCacheWithOptions with these options
// and the default size, 100. indexer may be nil.
func NewIntegerResourceVersionMutationCache(logger klog.Logger, backingCache Store, indexer Indexer, ttl time.Duration, includeAdds bool) MutationCache {
	return NewIntegerResourceVersionMutationCacheWithOptions(logger, backingCache, MutationCacheOptions{
		Indexer: indexer, TTL: ttl, IncludeAdds: includeAdds, MaxCacheSize: defaultMutationCacheSize,
	})
}

// mutationCache is the MutationCache. Its copies live in apimachinery's
// LRUExpireCache, as client-go's do, keyed by the object's key: the
// object a Mutation gave, or a tombstone (mutationTombstone) that
// OnDelete left. The type and that field have client-go's names, so that
// client-go's own tests, which look at mc.(*mutationCache).mutationCache,
// run on this one.
type mutationCache struct {
	logger        klog.Logger
	lock          sync.Mutex // one operation at a time, as in client-go
	backingCache  Store
	indexer       Indexer
	mutationCache *utilcache.LRUExpireCache
	includeAdds   bool
	ttl           time.Duration
	comparator    ResourceVersionComparator
}

var _ MutationCache = (*mutationCache)(nil)

func (c *mutationCache) internal() {}

// GetByKey returns the store's object for key, or the cache's copy if it
// is newer (M2). A key the store does not have is not found, unless
// IncludeAdds: then the cache's copy is answered (never a tombstone), and
// dropped by that same answer, since a copy is never newer than itself
// (M3). An object that is not a runtime.Object is answered as it is.
func (c *mutationCache) GetByKey(key string) (any, bool, error) {
	c.lock.Lock()
	defer c.lock.Unlock()
	obj, exists, err := c.backingCache.GetByKey(key)
	if err != nil {
		return nil, false, err
	}
	if !exists {
		// Without IncludeAdds a missing key is missing: the cache cannot
		// tell "the informer has not seen the create yet" from "deleted
		// since".
		if !c.includeAdds {
			return nil, false, nil
		}
		if obj, exists = c.ownCopy(key); !exists {
			return nil, false, nil
		}
	}
	o, ok := obj.(runtime.Object)
	if !ok {
		return obj, true, nil
	}
	return c.newerObject(key, o), true, nil
}

// ownCopy is the cache's live copy for key, a tombstone counting as none.
func (c *mutationCache) ownCopy(key string) (any, bool) {
	obj, ok := c.mutationCache.Get(key)
	if _, dead := obj.(*mutationTombstone); !ok || dead {
		return nil, false
	}
	return obj, true
}

// newerObject returns the cache's copy for key if it is newer than the
// store's object, and otherwise the store's, dropping the copy, which can
// never be newer again. The lock must be held.
func (c *mutationCache) newerObject(key string, stored runtime.Object) runtime.Object {
	copied, ok := c.mutationCache.Get(key)
	if !ok {
		return stored
	}
	mutated, ok := copied.(runtime.Object)
	if !ok {
		return stored
	}
	if c.comparator.CompareResourceVersion(stored, mutated) >= 0 {
		c.mutationCache.Remove(key)
		return stored
	}
	return mutated
}
