package store

import (
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/cachelab/cachelab/metrics"
)

// ExpirationPolicy decides whether an entry has expired. It mirrors
// client-go's ExpirationPolicy (expiration_cache.go).
type ExpirationPolicy interface {
	IsExpired(obj *TimestampedEntry) bool
}

// TTLPolicy expires an entry once it is older than TTL (X3). It mirrors
// client-go's TTLPolicy.
type TTLPolicy struct {
	// TTL > 0 expires an entry whose age exceeds it (an entry exactly TTL
	// old is still alive); TTL <= 0 expires nothing.
	TTL time.Duration
	// Clock measures the age. It is read on its own, not through the
	// cache: give the cache the same clock, or ages are measured from
	// timestamps on another clock (X4).
	Clock clock.Clock
}

// IsExpired reports whether obj is older than the TTL.
func (p *TTLPolicy) IsExpired(obj *TimestampedEntry) bool {
	return p.TTL > 0 && p.Clock.Since(obj.Timestamp) > p.TTL
}

// TimestampedEntry is what an ExpirationCache stores for each object: the
// object and when it was written, on the cache's clock (X1). It mirrors
// client-go's TimestampedEntry. Timestamps from another machine (an API
// server's, say) are not comparable with a local clock.
type TimestampedEntry struct {
	Obj       any
	Timestamp time.Time
	key       string // the key it is stored under, so List can recheck it
}

// ExpirationOptions configures an ExpirationCache.
type ExpirationOptions struct {
	// KeyFunc keys objects; nil means MetaNamespaceKeyFunc.
	KeyFunc KeyFunc
	// Clock stamps entries as they are written; nil means the real clock.
	Clock clock.Clock
	// Policy decides expiry; nil means a TTLPolicy of TTL on Clock.
	Policy ExpirationPolicy
	// TTL is the default policy's TTL (<= 0: nothing expires).
	TTL time.Duration
}

// ExpirationCache is a Store whose entries expire: each is stamped with
// the time it was written, and a read that finds it expired deletes it
// and reports it absent (X2). Nothing expires in the background. It
// mirrors client-go's ExpirationCache (expiration_cache.go).
type ExpirationCache struct {
	// mu is held by every write and from each expiry check to its
	// delete, so that an entry written in between is never deleted on
	// the strength of a check of the entry before it (X2).
	mu      sync.Mutex
	entries *ThreadSafeStore // key → *TimestampedEntry
	keyFunc KeyFunc
	clock   clock.Clock
	policy  ExpirationPolicy
	// expire removes an expired entry; a fake store also reports it (X6).
	expire func(key string)
}

var _ Store = (*ExpirationCache)(nil)

// NewExpirationCache returns an empty ExpirationCache.
func NewExpirationCache(opts ExpirationOptions) *ExpirationCache {
	if opts.KeyFunc == nil {
		opts.KeyFunc = MetaNamespaceKeyFunc
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.Policy == nil {
		opts.Policy = &TTLPolicy{TTL: opts.TTL, Clock: opts.Clock}
	}
	c := &ExpirationCache{
		entries: NewThreadSafeStore(nil, metrics.InformerNameAndResource{}, nil),
		keyFunc: opts.KeyFunc,
		clock:   opts.Clock,
		policy:  opts.Policy,
	}
	c.expire = func(key string) { c.entries.Delete(key, nil) }
	return c
}

// NewTTLStore returns an ExpirationCache whose entries expire ttl after
// they were written, on the real clock (X4). It mirrors client-go's
// NewTTLStore; NewExpirationCache takes a clock.
func NewTTLStore(keyFunc KeyFunc, ttl time.Duration) Store {
	return NewExpirationStore(keyFunc, &TTLPolicy{TTL: ttl, Clock: clock.RealClock{}})
}

// NewExpirationStore returns an ExpirationCache with the given policy that
// stamps entries on the real clock, whatever clock the policy reads (X4).
// It mirrors client-go's NewExpirationStore.
func NewExpirationStore(keyFunc KeyFunc, expirationPolicy ExpirationPolicy) Store {
	return NewExpirationCache(ExpirationOptions{KeyFunc: keyFunc, Policy: expirationPolicy})
}

// stamped wraps obj for storing under key, stamped now.
func stamped(key string, obj any, now time.Time) *TimestampedEntry {
	return &TimestampedEntry{Obj: obj, Timestamp: now, key: key}
}

// getOrExpire returns the object stored under key unless the policy says
// its entry has expired, in which case it removes it (X2).
func (c *ExpirationCache) getOrExpire(key string) (any, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	stored, ok := c.entries.Get(key)
	if !ok {
		return nil, false
	}
	entry := stored.(*TimestampedEntry)
	if c.policy.IsExpired(entry) {
		c.expire(key)
		return nil, false
	}
	return entry.Obj, true
}

// Add stores obj under its key, stamped now, replacing any entry there
// (and its timestamp) (X1).
func (c *ExpirationCache) Add(obj any) error {
	key, err := c.keyFunc(obj)
	if err != nil {
		return KeyError{obj, err}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries.Add(key, stamped(key, obj, c.clock.Now()))
	return nil
}

// Update is Add: it refreshes the timestamp.
func (c *ExpirationCache) Update(obj any) error { return c.Add(obj) }

// Delete removes the entry with obj's key, and remembers obj's
// resourceVersion if it has metadata, stored or not (X5).
func (c *ExpirationCache) Delete(obj any) error {
	key, err := c.keyFunc(obj)
	if err != nil {
		return KeyError{obj, err}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries.Delete(key, obj)
	return nil
}

// Get returns the object stored under obj's key, unless it has expired
// (X2, X7).
func (c *ExpirationCache) Get(obj any) (item any, exists bool, err error) {
	key, err := c.keyFunc(obj)
	if err != nil {
		return nil, false, KeyError{obj, err}
	}
	item, exists = c.getOrExpire(key)
	return item, exists, nil
}

// GetByKey returns the object stored under key, unless it has expired.
// It never fails.
func (c *ExpirationCache) GetByKey(key string) (item any, exists bool, err error) {
	item, exists = c.getOrExpire(key)
	return item, exists, nil
}

// List returns every object whose entry has not expired, in key order
// (client-go's: map order), and removes the expired ones (X2). Each entry
// is checked on its own, as client-go does, not under one lock for all.
func (c *ExpirationCache) List() []any {
	stored := c.entries.List()
	out := make([]any, 0, len(stored))
	for _, s := range stored {
		if obj, ok := c.getOrExpire(s.(*TimestampedEntry).key); ok {
			out = append(out, obj)
		}
	}
	return out
}

// ListKeys returns every stored key, expired or not: it asks no policy
// (X2). Key order (client-go's: map order).
func (c *ExpirationCache) ListKeys() []string { return c.entries.ListKeys() }

// Replace makes list the whole content, every object stamped with one
// reading of the clock (X1), and remembers resourceVersion. An object that
// cannot be keyed fails it with the cache unchanged.
func (c *ExpirationCache) Replace(list []any, resourceVersion string) error {
	now := c.clock.Now()
	items := make(map[string]any, len(list))
	for _, obj := range list {
		key, err := c.keyFunc(obj)
		if err != nil {
			return KeyError{obj, err}
		}
		items[key] = stamped(key, obj, now)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries.Replace(items, resourceVersion)
	return nil
}

// Resync does nothing.
func (c *ExpirationCache) Resync() error { return nil }

// LastStoreSyncResourceVersion is the remembered resourceVersion (X5): an
// entry has no metadata, so Add and Update do not change it; Delete,
// Replace and Bookmark do.
func (c *ExpirationCache) LastStoreSyncResourceVersion() string {
	return c.entries.ResourceVersion()
}

// Bookmark remembers rv.
func (c *ExpirationCache) Bookmark(rv string) { c.entries.Bookmark(rv) }
