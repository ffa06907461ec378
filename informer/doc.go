// Package informer holds the SharedIndexInformer: an indexed cache of one
// resource, kept in step with the server, that tells any number of
// handlers about every change. It is what controllers are built on.
//
// # The pipeline
//
//	etcd ─▶ ListerWatcher ─▶ Reflector ─▶ queue ─▶ processing ─▶ indexer (the cache)
//	                                                    │
//	                                                    └─▶ notify ─▶ listener ─▶ handler
//	                                                               ─▶ listener ─▶ handler
//
// The reflector (package reflector) writes into a queue (package
// deltafifo); one processing loop pops deltas, applies them to the indexer
// (package store) and turns them into notifications; each handler has a
// listener with its own unbounded buffer and goroutine, so a slow handler
// delays only itself (P10).
//
// # Two stacks
//
// client-go's feature gates decide which queue and which list strategy an
// informer uses; Options.Stack names the two combinations that matter:
//
//   - Default (client-go v0.37.2's defaults): watch-list first; RealFIFO in
//     atomic mode, so a relist is one ReplacedAll delta (P3), a resync one
//     SyncAll (P4), a bookmark a Bookmark delta (P5); runs of deltas are
//     written in one store transaction (P12).
//   - Classic (what most tutorials draw): LIST then WATCH; DeltaFIFO with
//     the indexer as KnownObjects; one Pop at a time; a relist is a
//     Replaced delta per object plus tombstones.
//
// # What handlers hear
//
//   - OnAdd(obj, isInInitialList), OnUpdate(old, new), OnDelete(obj) in
//     the order the informer saw the changes (P1, P2).
//   - A delete missed while the watch was down arrives as
//     store.DeletedFinalStateUnknown after the relist (P3).
//   - An update whose old and new share a resourceVersion is a sync: a
//     resync, or an unchanged object in a relist. It reaches only handlers
//     whose resync is due (P6, P7).
//   - A handler added after start first hears OnAdd(obj, true) for
//     everything cached (P8); its Registration.HasSynced turns true once
//     it has handled those (P9).
//
// # The plain informer
//
// Controller (NewController, Config) is client-go's low-level controller:
// a reflector filling a queue and one loop popping it into a process
// function. NewInformerWithOptions builds the plain informer on it: a
// store and one handler, called on the processing goroutine (P18). It is
// the layer a shared informer is built from; the difference is the
// handler: a shared informer's handlers each have a goroutine and a
// buffer (P10), a plain informer's handler holds up processing, and its
// panic is a processing panic (P14).
//
// # Typed handlers
//
// NewTypedSharedIndexInformer[T] is a typed view of an informer whose
// objects are all Ts: AddTypedEventHandler takes a
// TypedResourceEventHandler[T], whose OnDelete gets a DeletedObject[T]
// instead of "an object or a tombstone", and GetTypedIndexer answers with
// Ts (client-go v0.36, P17). The informer underneath is the same.
//
// # Waiting for sync
//
// WaitForCacheSync polls HasSynced functions, as client-go's always has.
// The informer's and each registration's HasSyncedChecker are
// DoneCheckers, which WaitFor waits on without polling and logs by name,
// each line at the line that called WaitFor, as a library logging on its
// caller's behalf should (client-go v0.36, P16, P22); ShutDownEventHandler removes a handler and
// waits until it will not be called again (P15). WaitForNamedCacheSync
// and its WithContext form say in the log who waits, and SyncResult sums
// up a wait for several informers (P21).
//
// # Names and metrics
//
// Options.Identifier names an informer for its metrics (package metrics):
// with a reserved name, its queue publishes its depth and each pop's
// processing time, and its indexer its resourceVersion, to
// Options.MetricsProvider or the process's provider (client-go v0.36,
// P20, R8, S6). A named informer's RealFIFO takes the name as its own.
//
// # Panics
//
// As in client-go, a panic in a handler or in processing goes to
// utilruntime.HandleCrashWithLogger or HandleCrashWithContext: it is
// logged ("Observed a panic") through the handler's logger
// (HandlerOptions.Logger) or Run's context's, utilruntime.PanicHandlers
// run, and the process crashes unless utilruntime.ReallyCrash is false.
// Then a handler loses that one notification and gets the next a second
// later (an initial-list OnAdd that panicked leaves its registration
// never synced); processing loses the rest of its item and resumes a
// second later (P14). Both seconds are real time, as client-go sleeps.
// If ReallyCrash is true, a processing panic leaves Run after the
// informer has stopped (a plain informer's handler panic included, since
// its handler runs on the processing loop): Run's caller can recover it.
//
// # Steps and traces
//
// Options.Trace hears each processing step (Event: pop, pop-batch,
// transaction, notify, deliver) and Options.ReflectorTrace each reflector
// step, so a trace can say which step produced each event.
//
// # Mirrors client-go
//
// shared_informer.go (sharedIndexInformer, sharedProcessor,
// processorListener), controller.go (controller, processDeltas,
// processDeltasInBatch, processReplacedAllInfo, the handler adapters,
// FilteringResourceEventHandler), listers.go (GenericLister) and
// synctrack (per-registration HasSynced), k8s.io/client-go v0.37.2.
// Differences in shape: the stack and the clock are options rather than
// global feature gates and a private field; a listener is one goroutine
// and a slice under a condition variable rather than two goroutines and a
// ring buffer; Registration exposes Synced and Finished channels (Finished
// is what ShutDownEventHandler waits for, P15);
// WaitForCacheSync and WaitForNamedCacheSync take a context and a clock;
// the cache mutation detector (P19) can also be turned on, and observed
// (OnMutation, MutationReport), through Options.
package informer
