// Package consistencydetector checks, in a test run, that what a watch-list
// stream gave a reflector is exactly what etcd holds at the same
// resourceVersion, and panics when it is not.
//
// # The problem
//
// In watch-list mode a reflector never LISTs: kube-apiserver streams the
// initial state from its watch cache as ADDED events and ends it with a
// bookmark at a resourceVersion (RV). The stream promises "the state at
// that RV, as etcd had it". A bug in the watch cache (an event lost, an
// object kept too long, an RV that does not match its data) would go into
// every informer's cache without a sound. The detector makes the claim
// checkable: after the stream, it LISTs the same RV straight from etcd
// (resourceVersionMatch=Exact) and compares.
//
//	watch-list ─▶ ADDED a@5  ADDED b@7  BOOKMARK@9 ─▶ retrieved: [a b]
//	LIST rv=9 resourceVersionMatch=Exact (etcd) ───▶ listed:    [a b c]
//	sort both by UID, reflect.DeepEqual ──▶ differ ──▶ panic("data inconsistency detected for <identity>, panicking!")
//
// It is meant for CI, not production: it costs a LIST per sync, and it
// panics on purpose, so that a test run fails loudly.
//
// # Switched on at process start
//
// The check runs only when the environment variable
// KUBE_WATCHLIST_INCONSISTENCY_DETECTOR parses as true (strconv.ParseBool)
// when the process starts (V1): the variable is read once, in the
// package's init, and IsDataConsistencyDetectionForWatchListEnabled says
// what it read. A test changes it with
// SetDataConsistencyDetectionForWatchListEnabledForTest, which returns
// the function that puts the old value back. The switch is process-wide,
// as client-go's is; CheckDataConsistency itself ignores it (the caller
// asks first, as package reflector does).
//
// # Invariants
//
//   - No LIST is sent when the request could not be valid with
//     resourceVersionMatch=Exact: a continue token, or RV "0" (V2).
//   - The LIST asks for exactly the synced RV, with everything else the
//     caller gave kept; a limit the watch cache ignored (RV "0", fewer
//     asked than retrieved) is dropped so that the lists are comparable
//     (V3).
//   - The retrieved items are read before the LIST; a failed LIST is tried
//     again every second of real time until it answers or the context
//     ends, and a check whose context ended never panics (V4).
//   - The comparison is of whole objects, after the transform on the
//     listed ones, each side sorted by UID; any difference panics with
//     the identity in the message (V5).
//
// # Mirrors client-go
//
// util/consistencydetector/data_consistency_detector.go in
// k8s.io/client-go v0.37.2, with its exported API unchanged (a port of
// client-go's own tests needs only its imports changed). Differences in
// shape: the switch is an atomic.Bool (client-go's a plain bool), and the
// retry is a loop of its own around a real-clock ticker where client-go
// calls wait.PollUntilContextCancel (the same tries at the same times).
// client-go v0.37.2 has no LIST counterpart (an earlier client-go had
// KUBE_LIST_FROM_CACHE_INCONSISTENCY_DETECTOR in its generated clients),
// so neither has cachelab (V7). The reflector's use of it is package
// reflector's (V6).
package consistencydetector
