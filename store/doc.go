// Package store is the cache at the bottom of every informer: a keyed map
// of objects with secondary indices, safe for one writer and many readers.
//
// # The problem
//
// A controller asks "give me pod ns/web-1" and "give me every pod on node
// n7" thousands of times a second. Asking the API server each time would
// crush it, so an informer keeps a local copy of every object it watches,
// and this is where the copy lives. The informer is the only writer; the
// controller's listers are the readers.
//
// # The pieces
//
//	            key function                      index functions
//	obj ──► "namespace/name" ──► ThreadSafeStore ──► "app"  : web → {ns/a, ns/b}
//	                              items[key] = obj     "node" : n7  → {ns/b}
//
// In order:
//
//   - A KeyFunc names an object. MetaNamespaceKeyFunc gives "ns/name" (or
//     "name" for a cluster-scoped object); DeletionHandlingMetaNamespaceKeyFunc
//     also accepts a DeletedFinalStateUnknown tombstone. SplitMetaNamespaceKey
//     undoes it (S1).
//   - ThreadSafeStore is the map, the indices and one read-write lock. It
//     takes keys, not objects (S2).
//   - Cache puts a key function (and an optional TransformFunc) in front of a
//     ThreadSafeStore, and is what implements Store and Indexer.
//   - An Indexer answers "which objects have index value v" from a
//     precomputed reverse map, kept current on every write (S3).
//   - A MutationCache (mutation_cache.go) sits in front of an informer's
//     store for a controller that must read its own writes at once: it
//     keeps what each write returned for a TTL and answers with the newer
//     of that and the store's object, by integer resourceVersion
//     (M1–M7).
//
// # Invariants
//
//   - For every index n, stored key k and value v: k is filed under v in n
//     exactly when n's IndexFunc, applied to the stored object, returns v. An
//     IndexFunc that fails on an object breaks this and panics, as in
//     client-go, with the store left as client-go leaves it: an added or
//     updated object stored but not indexed, a Replace's items and
//     resourceVersion in place and its indices rebuilt up to the failing
//     object, a Transaction's earlier entries applied. (client-go may also
//     have updated the indices that come before the failing one in map
//     order; cachelab updates none.)
//   - The store remembers a resourceVersion (S4): every Add and Update
//     takes the object's (an empty one resets it to ""), a Delete takes the
//     deleted object's if it has metadata (a tombstone has none), Replace and
//     Bookmark take the one they are given, a Transaction its last entry's.
//     An informer reads it back as "how fresh is my cache".
//   - A Transaction (S5) applies many writes under one lock, so readers never
//     see half a batch; entries that cannot be keyed are skipped and reported.
//   - List and ListKeys come in key order. client-go's come in map order,
//     which promises nothing, so key order is one of the orders it can
//     produce; cachelab fixes it so that everything that iterates a store
//     (a relist's deletion detection, a resync, a late handler's catch-up)
//     happens the same way on every run, and a trace can show the order
//     things really happened in.
//
// Costs: Get is O(1); Add and Update of a new key, and Delete, are O(1)
// plus one call of each index function; an Update of a stored key calls
// each twice (on the old and the new object); Replace is O(n); ByIndex is
// O(matches). List and ListKeys are O(n), like client-go's, and cheaper
// in practice: beside the map the store keeps its entries (key and
// object) in a slice in key order, so a list copies contiguous memory
// where client-go ranges over a map. A write does not touch that slice;
// it notes its key, and the next list catches up on the k keys noted:
// O(k log n) to find them, then at most one pass moving entries to make
// room or close gaps. After a Replace, or after more writes than a
// quarter of the store without a list, the next list sorts everything
// again (O(n log n)). Measured side by side (BenchmarkStoreList, in
// bench_list_test.go), List and ListKeys take less CPU than client-go's
// at 1k, 10k and 100k objects, both with no write since the last list
// and right after one; the index queries do what client-go's do. The
// price is memory: the slice holds 32 bytes per object and, between
// lists, may still hold objects the store has since replaced or deleted:
// one per key noted, and no more than a quarter of the store's count
// (plus 64) are noted before the slice is dropped.
//
// # Two more Stores: the expiration cache and the undelta store
//
// ExpirationCache (NewExpirationCache; client-go's NewTTLStore,
// NewExpirationStore and NewFakeExpirationStore) is a Store whose entries
// expire. Every write stamps its object with the cache's clock; a read
// that finds the entry expired (by its ExpirationPolicy, a TTLPolicy
// unless told otherwise) deletes it and reports it absent:
//
//	t=0   Add(a)               entries: a@0
//	t=5s  Add(b)               entries: a@0 b@5s
//	t=11s ListKeys → [a b]     (asks no policy: a is expired, but still there)
//	t=11s List → [b]           entries: b@5s        (a deleted by the read)
//
// Nothing expires in the background, so an entry nobody reads stays in
// memory (X1–X7).
//
// UndeltaStore (NewUndeltaStore) is a plain Store that, after every
// successful write, hands its whole content to a PushFunc: a stream of
// changes becomes a stream of complete states (U1, U2).
//
// # Metrics
//
// A store made with a reserved Options.Identifier publishes the
// resourceVersion it remembers, whenever it is a number, to its provider's
// gauge (S6; see package metrics).
//
// # Mirrors client-go
//
// store.go (Store, cache, the key functions), thread_safe_store.go
// (threadSafeMap, storeIndex), index.go (Indexer, IndexFunc),
// mutation_cache.go (MutationCache) in k8s.io/client-go/tools/cache,
// v0.37.2. NewStore and NewIndexer (newstore.go) are New in client-go's
// words, so that code written against tools/cache, client-go's own tests
// among it, reads the same here. Differences in shape: one
// constructor (New) with an Options struct, which NewStore and NewIndexer
// wrap (with WithTransformer their only option func); Transaction returns error rather than
// *TransactionError; HideResourceVersion stands in for client-go's
// AtomicFIFO feature gate (off: the RV reads as ""). Error and panic
// texts are client-go's, so traces compare line for line.
//
// expiration_cache.go, expiration_cache_fakes.go (ExpirationCache and its
// policies) and undelta_store.go (UndeltaStore) mirror those files. The
// expiration cache's one constructor with options is NewExpirationCache,
// which takes the clock that client-go's takes only in
// NewFakeExpirationStore; NewTTLStore, NewExpirationStore and
// NewFakeExpirationStore are kept with client-go's signatures, so that
// code written for client-go (and client-go's own tests) runs unchanged.
//
// Differences in behaviour, all at the edges:
//   - New with nil Indexers makes a store with an empty Indexers map, as
//     client-go's NewStore does; client-go's NewIndexer(keyFunc, nil)
//     keeps the nil map, and its AddIndexers then panics (assignment to
//     entry in nil map). cachelab's NewIndexer goes through New too, and
//     makes the empty map.
//   - When an IndexFunc panics, client-go has updated the indices that
//     come before it in map order; cachelab has updated none (one of the
//     outcomes client-go leaves to chance). The items and the
//     resourceVersion are left as client-go leaves them.
//   - The expiration cache's List, ListKeys and the undelta store's
//     pushes come in key order (client-go's: map order), as List does.
//   - A nil key function means MetaNamespaceKeyFunc and a nil clock the
//     real one, for the expiration and undelta stores as for New;
//     client-go's panic at their first use.
//   - Their LastStoreSyncResourceVersion reports the remembered
//     resourceVersion as client-go's does with AtomicFIFO on (the
//     default); they have no HideResourceVersion.
//   - The mutation cache's tombstone (the deletion OnDelete remembers)
//     answers every metav1.Object method; client-go's panics in all but
//     GetNamespace, GetName, GetUID and GetResourceVersion. Neither is
//     meant to be seen (M6 says when it is). MutationCacheOptions.Clock
//     is cachelab's: client-go's cache reads time.Now.
package store
