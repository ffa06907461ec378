package store

import (
	"fmt"

	"github.com/cachelab/cachelab/metrics"
)

// Store is a keyed collection of objects: what an informer's cache is, and
// what a reflector writes into. It mirrors client-go's Store (store.go).
type Store interface {
	Add(obj any) error
	Update(obj any) error
	Delete(obj any) error
	List() []any
	ListKeys() []string
	Get(obj any) (item any, exists bool, err error)
	GetByKey(key string) (item any, exists bool, err error)
	// Replace swaps the whole content for list and remembers
	// resourceVersion, as a relist does.
	Replace(list []any, resourceVersion string) error
	// Resync means nothing to a plain store; queues give it meaning.
	Resync() error
	// LastStoreSyncResourceVersion is the remembered resourceVersion (S4).
	LastStoreSyncResourceVersion() string
	// Bookmark remembers rv without changing any object.
	Bookmark(rv string)
}

// Indexer is a Store with secondary indices: "every object in namespace
// x", "every pod on node y". It mirrors client-go's Indexer (index.go).
type Indexer interface {
	Store
	Index(name string, obj any) ([]any, error)
	IndexKeys(name, value string) ([]string, error)
	ListIndexFuncValues(name string) []string
	ByIndex(name, value string) ([]any, error)
	GetIndexers() Indexers
	AddIndexers(more Indexers) error
}

// TransformFunc rewrites an object before it is stored or queued, typically
// to drop fields nobody reads (managedFields) and save memory. It must not
// modify its argument in place unless it knows nobody else holds it.
type TransformFunc func(obj any) (any, error)

// Options configures a Cache. The zero value is a store keyed by
// MetaNamespaceKeyFunc, with no indices and no transformer.
type Options struct {
	// KeyFunc keys objects; nil means MetaNamespaceKeyFunc.
	KeyFunc KeyFunc
	// Indexers are the initial index functions; more can be added later.
	Indexers Indexers
	// Transformer, if set, runs on every object Add, Update and Replace
	// store (not on Delete, and not on Transaction entries).
	Transformer TransformFunc
	// HideResourceVersion makes LastStoreSyncResourceVersion always report
	// "", as client-go does when its AtomicFIFO gate is off. The store
	// still tracks it.
	HideResourceVersion bool
	// Identifier and MetricsProvider, for a reserved Identifier, publish
	// the remembered resourceVersion (S8; client-go: WithStoreMetrics).
	Identifier      metrics.InformerNameAndResource
	MetricsProvider metrics.Provider
}

// Cache is the standard Store and Indexer: a key function in front of a
// ThreadSafeStore. It mirrors client-go's cache (store.go).
type Cache struct {
	items     *ThreadSafeStore
	keyFunc   KeyFunc
	transform TransformFunc
	hideRV    bool
}

var (
	_ Store   = (*Cache)(nil)
	_ Indexer = (*Cache)(nil)
)

// New returns an empty Cache.
func New(opts Options) *Cache {
	if opts.KeyFunc == nil {
		opts.KeyFunc = MetaNamespaceKeyFunc
	}
	return &Cache{
		items:     NewThreadSafeStore(opts.Indexers, opts.Identifier, opts.MetricsProvider),
		keyFunc:   opts.KeyFunc,
		transform: opts.Transformer,
		hideRV:    opts.HideResourceVersion,
	}
}

// keyAndTransform is the common first half of Add, Update and Replace.
func (c *Cache) keyAndTransform(obj any) (string, any, error) {
	key, err := c.keyFunc(obj)
	if err != nil {
		return "", nil, KeyError{obj, err}
	}
	if c.transform != nil {
		if obj, err = c.transform(obj); err != nil {
			return "", nil, fmt.Errorf("transforming: %w", err)
		}
	}
	return key, obj, nil
}

// Add stores obj (transformed) under its key.
func (c *Cache) Add(obj any) error {
	key, obj, err := c.keyAndTransform(obj)
	if err != nil {
		return err
	}
	c.items.Add(key, obj)
	return nil
}

// Update stores obj (transformed) under its key; it is the same as Add.
func (c *Cache) Update(obj any) error {
	key, obj, err := c.keyAndTransform(obj)
	if err != nil {
		return err
	}
	c.items.Update(key, obj)
	return nil
}

// Delete removes the object with obj's key. obj may be a tombstone if the
// key function understands tombstones.
func (c *Cache) Delete(obj any) error {
	key, err := c.keyFunc(obj)
	if err != nil {
		return KeyError{obj, err}
	}
	c.items.Delete(key, obj)
	return nil
}

// List returns every object, in key order (client-go's: map order).
func (c *Cache) List() []any { return c.items.List() }

// ListKeys returns every key, in key order (client-go's: map order).
func (c *Cache) ListKeys() []string { return c.items.ListKeys() }

// Get returns the stored object with obj's key.
func (c *Cache) Get(obj any) (item any, exists bool, err error) {
	key, err := c.keyFunc(obj)
	if err != nil {
		return nil, false, KeyError{obj, err}
	}
	return c.GetByKey(key)
}

// GetByKey returns the object stored under key. It never fails; the error
// is there to satisfy the Store shape.
func (c *Cache) GetByKey(key string) (item any, exists bool, err error) {
	item, exists = c.items.Get(key)
	return item, exists, nil
}

// Replace keys and transforms every object of list, then swaps the whole
// content for them at once. If any object cannot be keyed or transformed,
// it returns the error and the store is unchanged. A key listed twice
// keeps its last object.
func (c *Cache) Replace(list []any, resourceVersion string) error {
	items := make(map[string]any, len(list))
	for _, obj := range list {
		key, obj, err := c.keyAndTransform(obj)
		if err != nil {
			return err
		}
		items[key] = obj
	}
	c.items.Replace(items, resourceVersion)
	return nil
}

// Resync does nothing: a plain store has nothing to resync.
func (c *Cache) Resync() error { return nil }

// LastStoreSyncResourceVersion is the remembered resourceVersion, or "" if
// the Cache was made with HideResourceVersion.
func (c *Cache) LastStoreSyncResourceVersion() string {
	if c.hideRV {
		return ""
	}
	return c.items.ResourceVersion()
}

// Bookmark remembers rv.
func (c *Cache) Bookmark(rv string) { c.items.Bookmark(rv) }

// Len is the number of stored objects.
func (c *Cache) Len() int { return c.items.Len() }

// Index returns the objects sharing a value of index name with obj.
func (c *Cache) Index(name string, obj any) ([]any, error) { return c.items.Index(name, obj) }

// IndexKeys returns the sorted keys whose index name holds value.
func (c *Cache) IndexKeys(name, value string) ([]string, error) {
	return c.items.IndexKeys(name, value)
}

// ListIndexFuncValues returns the values index name holds.
func (c *Cache) ListIndexFuncValues(name string) []string { return c.items.ListIndexFuncValues(name) }

// ByIndex returns the objects whose index name holds value.
func (c *Cache) ByIndex(name, value string) ([]any, error) { return c.items.ByIndex(name, value) }

// GetIndexers returns the index functions: the map the store was made
// with, not a copy (S3).
func (c *Cache) GetIndexers() Indexers { return c.items.GetIndexers() }

// AddIndexers adds index functions and indexes existing objects with them.
func (c *Cache) AddIndexers(more Indexers) error { return c.items.AddIndexers(more) }
