// Package listwatch is the "world" cachelab's informers live in: a real
// etcd, read and written the way kube-apiserver's storage layer does it,
// with no apiserver and no cluster to install.
//
// # The problem
//
// An informer learns about objects through two calls, LIST and WATCH, and
// everything it believes comes from their resourceVersions. To show what an
// informer really does (relist after 410 Gone, bookmarks, watch-list) the
// other side must behave like kube-apiserver over etcd, down to its error
// codes. This package is that other side.
//
//	Writer ──put/txn──► etcd ──range read──► ListerWatcher.List  ──► reflector
//	                     │                                          (client-go's or cachelab's)
//	                     └────watch stream──► ListerWatcher.Watch ──►
//
// # The pieces
//
//   - Embedded starts etcd inside the process: loopback only, on ports the
//     kernel picks (so many run side by side), silent, without fsync unless
//     asked, and with the controls a simulator needs: Compact, Revision,
//     Restart, and Snapshot, Restore and Wipe, which take its revision
//     back (to a snapshot's, or to 1). With EmbeddedOptions.Members it is
//     a cluster on loopback (cluster.go): StopMember, StartMember (the
//     member rejoins and catches up), MoveLeader and Leader; Snapshot,
//     Restore and Wipe refuse there. Connect reaches any etcd by its
//     endpoints, with TLS; ClientOptions.InOrder uses them one at a time,
//     in order, so the member serving a watch is known.
//   - Resource says where objects live (E1): /registry/<resource>/<ns>/<name>,
//     stored as JSON without resourceVersion; every read stamps the key's
//     etcd mod revision as resourceVersion.
//   - Writer creates, updates and deletes with optimistic concurrency (E2):
//     a resourceVersion or UID precondition that no longer holds is a
//     Conflict; an unconditional write applies to whatever is current.
//   - ListerWatcher is client-go's ListerWatcher (and
//     ListerWatcherWithContext), so real client-go informers run on it.
//
// # What LIST and WATCH promise (as kube-apiserver does)
//
//   - E3: a LIST reads every item at one etcd revision, and the list's
//     resourceVersion is that revision, not its newest item's. RV "" reads
//     the latest; "0" means "anything", here the latest; NotOlderThan N reads
//     the latest and fails 504 (cause ResourceVersionTooLarge) if N is in the
//     future; Exact N reads at N; a compacted N is 410 Expired.
//   - E4: pages (limit/continue) are all read at the first page's revision;
//     when that revision is compacted, 410 carries a token that continues
//     at the latest revision instead.
//   - E5: label and field (metadata.name, metadata.namespace) selectors
//     filter after decoding; in a watch, an update that enters the selector
//     arrives as ADDED and one that leaves it as DELETED.
//   - E6: WATCH from RV r delivers every change after r, in revision order;
//     a delete carries the last state, stamped with the delete's revision.
//     From RV "" or "0" (the legacy form) it first sends every object as
//     ADDED.
//   - E7: a watch that falls behind etcd's compaction ends with an Error
//     event, 410 Expired: the client must relist.
//   - E8: a watch that allowed bookmarks gets a BOOKMARK (an empty object
//     carrying only a resourceVersion) when etcd reports progress. etcd does
//     so on request (RequestProgress) or on its own timer, and only for
//     watches that have caught up with their start revision. kube-apiserver's
//     watch cache sends them about once a minute; here their timing is a
//     simulator control.
//   - E9: watch-list (SendInitialEvents) streams every object as ADDED, then
//     a BOOKMARK annotated k8s.io/initial-events-end at the snapshot
//     revision, then live events on the same stream.
//   - E12: a stored value that cannot be decoded (corrupt.go) fails a
//     LIST with 500 StorageReadError naming each such key, as
//     kube-apiserver 1.37 does with its AllowUnsafeMalformedObjectDeletion
//     gate (on by default); a WATCH that meets one ends with a 500 Error
//     event. Only the decoder's own words are this package's.
//
// On a cluster (E14, E15) a watch is served by the member its client's
// connection reached. When that member stops, etcd's client resumes the
// watch on another member from the revision it had reached, and the
// ListerWatcher's watch goes on: its client sees nothing. A leader change
// is not seen either. kube-apiserver watches with etcd's WithRequireLeader,
// so a watch on a member left without a leader for about three election
// timeouts ends with "etcdserver: no leader"; this package does not ask
// for it, a difference no lever here reaches (a member up always has a
// leader, since levers keep a majority up).
//
// Each watch buffers its own events, so a client that reads one watch
// slowly does not hold up the others sharing the etcd client's stream.
// HoldWatches, ReleaseWatches and DropWatches let a test or the simulator
// break a client's watch and make something (a compaction, say) happen
// before it comes back.
//
// # Mirrors
//
// k8s.io/apiserver@v0.37.2 pkg/storage/etcd3 (store.go, watcher.go,
// errors.go) and pkg/storage/continue.go, without the watch cache: error
// texts, continue tokens and revision rules are kube-apiserver's. Where
// this package differs, it says so: there is no watch cache, so RV "0" is
// served from etcd at the latest revision; validation errors are 400 BadRequest where
// kube-apiserver's handlers return 422 Invalid for some of them. A watch
// fixes "now" (the snapshot its initial events are read at, or its start
// for RV "" without them) when Watch is called; kube-apiserver fixes it a
// moment later, when its watcher goroutine runs. Call time is one of the
// moments kube-apiserver allows, and it keeps traces deterministic: a
// write made after Watch returns is always an event, never part of the
// snapshot.
package listwatch
