// Package world is the server side of a simulator run: each informer's
// connection to the simulated kube-apiserver over etcd, and the levers a
// scenario pulls on it.
//
// # The problem
//
// An informer's behaviour is interesting where its connection misbehaves:
// a watch that ends, a request that fails, a LIST that pages, a server
// that is unreachable for a while. To compare cachelab's informer with
// client-go's, both must meet the same misbehaviour at the same point of
// the scenario, and both must be seen the same way.
//
// # The pieces
//
//	informer ──LIST/WATCH──▶ Conn ──▶ listwatch.ListerWatcher ──▶ etcd
//	         ◀──events──────       ◀──
//
// A Conn sits between one informer and its ListerWatcher (package
// listwatch: kube-apiserver's answers, over etcd). Each side of a run has
// its own, built the same way, so everything a Conn records (the request
// lines, the watch events as they are handed over) is recorded the same
// way for both implementations. It applies the informer's namespace and
// selectors, and it carries the levers:
//
//   - Disconnect and Reconnect: open watches end, new requests wait.
//   - CloseWatches: the server ends every open watch, as at its timeout.
//   - SetFailNext: the next LIST (or one page of it) or WATCH fails with
//     an HTTP status; SetExpireContinue: the next continue token has
//     expired.
//   - a LIST that failed on a value kube-apiserver cannot decode holds the
//     informer's retries until etcd changes (EtcdChanged), since each
//     would fail the same way on a real-clock backoff.
//   - Pause and Resume: a lever that changes the server in two parts (a
//     kube-apiserver restart) holds the calls its first part causes, with
//     no trace line, until its second part is done, so that they meet the
//     server in one state on every run.
//
// The levers on etcd itself (restart, snapshot, restore, wipe) are
// listwatch.Embedded's; writes are listwatch.Writer's.
//
// # What settling reads
//
// A run settles after each step: it waits until both informers have done
// everything the step caused. A Conn says what it knows of that (State:
// open and held requests, a watch-list not yet replaced, an event between
// etcd and its trace line, a re-watch backoff waiting on the scenario's
// clock) and why etcd would not answer a progress request now
// (ProgressBlocker).
//
// # Dependencies
//
// world uses trace (events, the recorder) and listwatch; package sim, the
// runner, uses world. Nothing here knows about informers, scenarios or
// the comparison.
package world
