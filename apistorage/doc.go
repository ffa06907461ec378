// Package apistorage runs kube-apiserver's own storage layer in-process:
// k8s.io/apiserver v0.37.2's etcd3 store and, in front of it, its watch
// cache (the cacher and its cache delegator), over the same etcd and key
// layout as package listwatch (JSON objects under
// /registry/<resource>/<namespace>/<name>, read back as
// *unstructured.Unstructured).
//
// It is the second world cachelab's informers can live in. listwatch is
// cachelab's own kube-apiserver with the watch cache switched off: every
// LIST and WATCH reads etcd. A real cluster answers from the cache:
//
//	informer ──LIST/WATCH──▶ ListerWatcher ──▶ cache delegator ──▶ cacher (watch cache) ──▶ etcd3 store ──▶ etcd
//	                          (REST handler      │   an exact read older than the cache ▲
//	                           and registry)     └─▶ etcd3 store ───────────────────────┘
//
// and that changes what an informer sees:
//
//   - a LIST at resourceVersion "0" is whatever the cache holds, which can
//     be older than what the informer has seen (a relist that goes back
//     in time);
//   - a LIST at "" is a consistent read: the cacher asks etcd for its
//     revision and waits (up to 3 s of the server's clock) for the cache
//     to reach it;
//   - every WATCH is served from the cache, which answers 410 once the
//     resourceVersion asked for has left its history (about 75 s of
//     events), and 429 while it is not ready;
//   - the cache sends its own bookmarks (about every minute, and just
//     before a watch's deadline); etcd's progress notifications stop at
//     the cache.
//
// Nothing here re-implements those rules: the requests go to
// k8s.io/apiserver's code. What this package adds is what kube-apiserver's
// HTTP layer does around it (options decoded, defaulted and validated;
// the registry's predicate and key range, E16; watch deadlines on an
// injectable clock; a copy of each object, as a client gets over the
// wire), the etcd3 store put together as kube-apiserver's storage factory
// does it (with the corrupt-object handling of its
// AllowUnsafeMalformedObjectDeletion gate, E12), and what a simulator
// needs and a server does not:
//
//   - CacheCaughtUp says when the cache has taken in a revision (the feed
//     between etcd and the cacher notes what it handed over), and
//     Quiescent when it has nothing in flight: every goroutine running the
//     cacher's code parked, no event on its way to a client. A watch
//     whose selectors filter a write out gets nothing for it, not even a
//     bookmark, so an informer alone cannot tell; Watch.Handed counts
//     what a client has taken. Stalled says when every request in
//     progress waits in a cache for it to catch up (only its clock, or
//     the cache catching up, moves it on).
//   - HoldCache and ReleaseCache make the cache fall behind etcd for as
//     long as a scenario needs, as a busy kube-apiserver's does for a
//     moment; RestartCache plays a kube-apiserver restart, and WaitReady
//     waits for the new cache (New waits for the first). Events are
//     stamped with the server's clock, so the cache's history window is
//     in the scenario's time.
//   - The cacher's clock drives its timers, but not all of its waits: its
//     dispatcher polls the wall clock every 10 ms for the cache's first
//     LIST before it looks at its bookmark timer. New and WaitReady return
//     only once it is past that poll, and Quiescent counts a goroutine
//     parked in one of apimachinery's wall-clock wait loops as busy, so
//     that a clock moved right after a start reaches the bookmark timer
//     on every run at the same point. kube-apiserver's cache consistency
//     checker, which compares the cache with etcd every few minutes of
//     wall time, is switched off: walltime.go lists every wall-clock
//     loop of the storage and what is done about each.
//
// WithSource tells a caller whether a LIST was answered from the cache or
// from etcd.
//
// This package is the oracle listwatch is proven against, so it is
// proven itself: registry_oracle_test.go sends the same LISTs and
// WATCHes to it (without the cache) and to kube-apiserver's own generic
// registry over the storage its factory builds, with a value that cannot
// be decoded inside and outside each request's range of keys.
//
// The from-scratch packages never import this one: it is a world for them
// to live in, and an oracle for listwatch.
package apistorage
