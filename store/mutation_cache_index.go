package store

import (
	"slices"

	"k8s.io/apimachinery/pkg/runtime"
)

// ByIndex returns the indexer's objects whose index name holds indexKey,
// in the order of the indexer's IndexKeys (sorted), each replaced by the
// cache's copy where that is newer. With IncludeAdds, the cache's own
// copies of keys the indexer did not list follow, least recently used
// first, those whose index name holds indexKey (an index function that
// fails on a copy leaves it out, logged at V(4)). Without an indexer it
// returns an error; an unknown index name is the indexer's error (M4).
func (c *mutationCache) ByIndex(name string, indexKey string) ([]any, error) {
	c.lock.Lock()
	defer c.lock.Unlock()
	if c.indexer == nil {
		return nil, errNoIndexer
	}
	keys, err := c.indexer.IndexKeys(name, indexKey)
	if err != nil {
		return nil, err
	}
	items, err := c.indexed(keys)
	if err != nil || !c.includeAdds {
		return items, err
	}
	listed := make(map[string]bool, len(keys))
	for _, k := range keys {
		listed[k] = true
	}
	return append(items, c.addedMatching(name, indexKey, listed)...), nil
}

// indexed reads keys from the indexer, each object replaced by the
// cache's newer copy; a key the indexer no longer has is skipped.
func (c *mutationCache) indexed(keys []string) ([]any, error) {
	var items []any
	for _, key := range keys {
		obj, exists, err := c.indexer.GetByKey(key)
		if err != nil {
			return nil, err
		}
		if !exists {
			continue
		}
		if o, ok := obj.(runtime.Object); ok {
			obj = c.newerObject(key, o)
		}
		items = append(items, obj)
	}
	return items, nil
}

// addedMatching returns the cache's live copies of keys not in listed
// whose index name holds indexKey. Every key is read with Get first, as
// client-go reads them: a Get drops an expired copy and moves a live one
// to the front, and since Keys come least recently used first, walking
// them all leaves their order as it was.
func (c *mutationCache) addedMatching(name, indexKey string, listed map[string]bool) []any {
	indexFunc := c.indexer.GetIndexers()[name]
	var items []any
	for _, k := range c.mutationCache.Keys() {
		key := k.(string)
		obj, ok := c.mutationCache.Get(key)
		if _, dead := obj.(*mutationTombstone); !ok || dead || listed[key] {
			continue
		}
		values, err := indexFunc(obj)
		if err != nil {
			c.logger.V(4).Info("Unable to calculate an index entry for mutation cache entry", "key", key, "err", err)
			continue
		}
		if slices.Contains(values, indexKey) {
			items = append(items, obj)
		}
	}
	return items
}
