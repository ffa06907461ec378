// Package reflector keeps a store in step with a resource on the server:
// it lists what exists, then watches what changes, and when the watch
// cannot go on, it lists again. It is the first half of an informer (the
// queue and the processing loop are the second; see package informer).
//
// # The problem
//
// A controller needs the current state of many objects, and every change
// to them, without asking the server each time. A LIST gives the state at
// one resourceVersion (RV); a WATCH from that RV gives every change after
// it. The reflector glues the two and repairs the glue when it breaks: a
// watch times out, the server compacts the history the watch needed (410
// Gone), the connection drops.
//
// # The steps
//
//	            ┌──────────── Run: forever, with backoff between rounds (F6) ───────────┐
//	            │                                                                       │
//	ListAndWatch: WatchList ──(fails)──▶ List ──▶ Replace(items, rv) ──▶ Watch loop ───┘
//	              (F2)                   (F1, F5)                         (F3, F4)
//	              stream initial events                                   Add/Update/Delete/Bookmark
//	              until the end bookmark                                  re-watch at once after a
//	              then Replace                                            normal close; return (relist)
//	                                                                      after 410, errors, short watches
//
// Each step is an exported method (WatchList, List, Watch, Resync), so a
// simulator or a test can take one at a time; Run is a short loop around
// them. Options.Trace hears every step (Event), so a trace can say which
// step produced each request, watch event and store call.
//
// # Invariants
//
//   - The store only ever gets a whole list (Replace) or the events that
//     follow it, in the server's order.
//   - LastSyncResourceVersion moves after the store has the data: after
//     Replace, and after each processed event (not for dropped or Error
//     events; not for the synthetic ADDED events of a watch from RV "").
//   - A 410 or "too large RV" on a list makes the next request ask for RV
//     "" (the freshest data), once; a good list clears that (F5).
//   - Every wait uses Options.Clock and every random draw Options.Rand,
//     so a run with a fake clock and a seeded source is repeatable.
//   - When the context ends, Run and ListAndWatch return at once, even in
//     a LIST whose ListerWatcher ignores the context: the LIST runs on a
//     goroutine of its own, and its late result is dropped (F8).
//   - A panic in a round (the ListerWatcher, a LIST, storing a watch
//     event) is handled by utilruntime.HandleCrashWithContext, as in
//     client-go: logged, utilruntime.PanicHandlers run, and the process
//     crashes unless utilruntime.ReallyCrash is false; then the next round
//     comes after the backoff (F8).
//   - With the data consistency detector on (package
//     consistencydetector: KUBE_WATCHLIST_INCONSISTENCY_DETECTOR at process
//     start), a watch-list's initial events are compared with a LIST of the
//     end bookmark's RV from etcd before they are stored; on a difference
//     the round panics, before Replace, and the panic is handled as above
//     (V6). LIST mode has no such check.
//   - Every watch a round opened is stopped when the round ends, however
//     it ends (F8). client-go leaves a watch-list stream open when storing
//     its initial list fails or panics; cachelab stops that one too, a
//     difference kept on purpose.
//
// # Mirrors client-go
//
// reflector.go (Reflector, ListAndWatch, watchList, list, watch,
// handleAnyWatch), listwatch.go (ListerWatcher, ToListerWatcherWithContext),
// reflector_data_consistency_detector.go, retry_with_deadline.go, tools/pager, and the backoff
// NewReflectorWithOptions builds, in k8s.io/client-go v0.37.2. Differences
// in shape: one constructor with Options; UseWatchList is an option (the
// WatchListClient gate in client-go); relist backoff waits on
// Options.Clock, where client-go waits on the real clock even when given a
// fake one; jitter and watch timeouts come from Options.Rand instead of
// the global source; the 10 s "still waiting for the end bookmark"
// warning ticker is left out (it only logs).
package reflector
