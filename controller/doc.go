// Package controller is the loop people mean when they say "a Kubernetes
// controller": an informer's events become keys on a rate-limiting
// workqueue, and a few workers reconcile each key from the cache until
// the world matches it.
//
// # Not client-go's cache.Controller
//
// client-go has a type called Controller too (tools/cache/controller.go),
// and informer/ mirrors it: a reflector filling a queue and one loop
// popping deltas into the cache and the handlers. That is the inside of
// an informer. This package is what sits on top of one, the loop that
// kubernetes/sample-controller writes by hand and controller-runtime
// packages: it is not in client-go, only its parts are (the informer, the
// Lister, util/workqueue). It is built on cachelab's informer/ and
// workqueue/, and imports no client-go.
//
// # The loop
//
//	informer ──OnAdd/OnUpdate/OnDelete──▶ key ──Add──▶ workqueue
//	                                                     │ Get (one worker per key)
//	                                                     ▼
//	            reconcile(key): read the Lister, act, return (Result, error)
//	                                                     │
//	     error ──────────────▶ AddRateLimited(key)       │   5ms, 10ms, 20ms, ...
//	     RequeueAfter d ─────▶ Forget(key), AddAfter(key, d)
//	     success ────────────▶ Forget(key)
//	     always ─────────────▶ Done(key)
//
// Handlers do not look at what changed (K1): every add, update and delete
// queues the object's key, "namespace/name", and a delete the informer
// only noticed on a relist arrives as a store.DeletedFinalStateUnknown
// tombstone that still carries the key (DeletionHandlingMetaNamespaceKeyFunc).
//
// The reconcile is given the key, not the event (K2). It reads the object
// from the cache, so it is level-triggered: ten updates that pile up while
// a worker holds the key become one more reconcile, which sees only the
// latest version, and a delete is a key the Lister no longer finds. The
// queue never hands a key to two workers at once (workqueue W2).
//
// What the result does to the key (K3-K5) is what sample-controller and
// controller-runtime do:
//
//   - an error: AddRateLimited, so the key backs off by the limiter
//     (DefaultControllerRateLimiter: 5ms doubling to 1000s);
//   - success: Forget, so the next failure starts from 5ms again; a loop
//     that forgets to Forget backs off further every time, forever;
//   - RequeueAfter d and no error: Forget, then AddAfter(d): a timer, not
//     a failure;
//   - RequeueAfter d and an error: the error wins, d is dropped and the
//     key backs off (controller-runtime does the same, and logs a warning
//     saying so). A reconcile that wants a fixed delay must return nil.
//
// Done is deferred, so it runs whatever happens: a key never Done stays
// held, and its later events are never handed out again.
//
// # The staleness guard
//
// A controller that writes an object and reconciles it again before its
// informer has seen that write reads its own past, and may redo the write
// or undo it (the stale-controller problem, KEP-5647). A client-go Store
// now reports LastStoreSyncResourceVersion, the newest resourceVersion it
// has applied (kubernetes PR 134827; v0.37.2 has it on the Store, not on
// the informer: GetStore().LastStoreSyncResourceVersion()), and KEP-5504
// made resourceVersions comparable (CompareResourceVersions, K6, as apimachinery's helper).
// With Options.StalenessGuard the controller remembers the resourceVersion
// of its own last write of each key (Result.Wrote) and, before each
// reconcile, compares (K7, K8):
//
//	store's LastStoreSyncResourceVersion < our write   → skip, AddRateLimited
//	otherwise, or the two cannot be compared        → forget the write, reconcile
//
// # Shutdown
//
// Run starts the workers once the handler has seen the initial list, and
// when its context ends shuts the queue down with drain (K9): new keys
// are ignored, a key waiting for its delay is dropped, workers finish the
// key they hold and what was already queued, and Run returns only after
// every worker has. It then removes its handler from the informer.
//
// # Steps and traces
//
// ProcessNextWorkItem is one turn of one worker, callable directly, as a
// sample-controller test calls one step instead of waiting for the loop.
// With Options.Manual the queue's delays wait for Flush too, so a caller
// on a fake clock decides when a backoff ends (the simulator's
// start-controller steps the loop this way).
// Options.Trace hears every step as an Event: handler enqueues, workqueue
// operations with the delays the limiter chose, guard decisions and
// reconcile results.
//
// # Mirrors
//
// kubernetes/sample-controller controller.go (enqueue, Run, runWorker,
// processNextWorkItem), controller-runtime pkg/internal/controller
// (reconcileHandler's requeue rules, Start's shutdown), client-go
// v0.37.2 tools/cache (DeletionHandlingMetaNamespaceKeyFunc,
// Store.LastStoreSyncResourceVersion, WaitFor) and apimachinery v0.37.2
// util/resourceversion. The differential tests run each scenario on this
// package and on the same loop written on client-go's informer and
// workqueue (internal/cgloop, which the simulator runs too; REFERENCE.md,
// K1-K9). Differences in shape: one
// ReconcileFunc over string keys rather than a typed request; Run waits on
// the registration's HasSyncedChecker instead of polling
// WaitForCacheSync; workers are plain goroutines, not wait.Until loops
// (which only restart a worker after its queue has shut down).
package controller
