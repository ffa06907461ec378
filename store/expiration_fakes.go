package store

import (
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/clock"
)

// FakeExpirationPolicy expires every entry except those whose key is in
// NeverExpire (X6). It mirrors client-go's FakeExpirationPolicy
// (expiration_cache_fakes.go).
type FakeExpirationPolicy struct {
	NeverExpire sets.Set[string]
	// RetrieveKeyFunc keys the *TimestampedEntry itself, not the object
	// in it; its error is ignored (the key is then "").
	RetrieveKeyFunc KeyFunc
}

// IsExpired reports whether obj's key is not in NeverExpire.
func (p *FakeExpirationPolicy) IsExpired(obj *TimestampedEntry) bool {
	key, _ := p.RetrieveKeyFunc(obj)
	return !p.NeverExpire.Has(key)
}

// NewFakeExpirationStore returns an ExpirationCache on cacheClock that
// sends each expired key on deletedKeys once it has removed the entry,
// still holding the cache's lock, so that a full channel holds up every
// other read and write of the cache until someone receives (X6). With
// deletedKeys nil, an expired entry is reported absent but kept: it stays
// in ListKeys, and a read under a policy that no longer expires it finds
// it again. It mirrors client-go's NewFakeExpirationStore.
func NewFakeExpirationStore(keyFunc KeyFunc, deletedKeys chan<- string, expirationPolicy ExpirationPolicy, cacheClock clock.Clock) Store {
	c := NewExpirationCache(ExpirationOptions{KeyFunc: keyFunc, Clock: cacheClock, Policy: expirationPolicy})
	c.expire = func(key string) {
		if deletedKeys != nil {
			c.entries.Delete(key, nil)
			deletedKeys <- key
		}
	}
	return c
}
