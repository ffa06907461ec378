package deltafifo

import (
	"cmp"
	"k8s.io/klog/v2"
	"sync"

	"k8s.io/utils/clock"

	"github.com/cachelab/cachelab/fifo"
	"github.com/cachelab/cachelab/internal/initlist"
	"github.com/cachelab/cachelab/metrics"
	"github.com/cachelab/cachelab/store"
)

// RealFIFOOptions configures a RealFIFO. Not every combination is valid:
// see NewRealFIFO.
type RealFIFOOptions struct {
	// KeyFunction keys objects; nil means store.MetaNamespaceKeyFunc.
	KeyFunction store.KeyFunc
	// KnownObjects is the consumer's cache, needed (only) in non-atomic
	// mode to make tombstones on Replace and Sync deltas on Resync.
	KnownObjects KeyListerGetter
	// Transformer runs once on every object as it enters the queue.
	Transformer TransformFunc
	// AtomicEvents makes Replace one ReplacedAll delta and Resync one
	// SyncAll delta, which the consumer applies to its cache in one step
	// (R3). client-go's AtomicFIFO gate, on by default, turns this on.
	AtomicEvents bool
	// UnlockWhileProcessing releases the queue's lock while process runs
	// (when fewer than 2000 deltas are queued), so the producer is not
	// held up by slow handlers. Requires AtomicEvents.
	UnlockWhileProcessing bool
	// EmitDeltaTypeBookmark makes Bookmark queue a Bookmark delta; without
	// it Bookmark does nothing. Requires AtomicEvents.
	EmitDeltaTypeBookmark bool
	// Identifier and MetricsProvider, for a reserved Identifier, publish
	// the queue's length and each pop's processing time (R8; see package
	// metrics).
	Identifier      metrics.InformerNameAndResource
	MetricsProvider metrics.Provider
	// Clock times processing for the latency metric; the real clock if
	// nil (client-go always uses the real one).
	Clock clock.PassiveClock
	// Name names the queue where it is waited for (Name, and a
	// controller's HasSyncedChecker): the Identifier's name if it has
	// one, else Name, else "RealFIFO". It also names the logger.
	Name string
	// Logger is where the queue reports lookup errors (through
	// utilruntime.HandleErrorWithLogger); the global klog logger at the
	// time the queue is made if nil.
	Logger *klog.Logger
}

// batchSize is the most deltas PopBatch hands over at once.
const batchSize = 1000

// RealFIFO queues every change as its own delta, in arrival order, with no
// merging (R1): a consumer sees each add, update and delete, including
// deletes of objects it never saw. It is the queue of client-go's default
// informers.
//
// It mirrors client-go's RealFIFO (the_real_fifo.go).
type RealFIFO struct {
	mu        sync.Mutex
	cond      sync.Cond // signalled when the queue grows or closes
	items     []Delta
	synced    *initlist.Tracker
	keyFunc   store.KeyFunc
	known     KeyListerGetter
	transform TransformFunc
	atomic    bool
	unlock    bool
	bookmarks bool
	closed    bool
	popped    int // deltas popped and still being processed
	metrics   metrics.Queue
	clock     clock.PassiveClock
	timed     bool // processing is timed: the latency metric is published
	name      string
	logger    klog.Logger
}

// NewRealFIFO returns an empty, open RealFIFO. It panics on an option
// combination that cannot work (R7): atomic mode must not have
// KnownObjects (it releases its lock while the consumer writes to them),
// and non-atomic mode must have them and must not unlock or emit bookmarks.
func NewRealFIFO(opts RealFIFOOptions) *RealFIFO {
	checkOptions(opts)
	if opts.KeyFunction == nil {
		opts.KeyFunction = store.MetaNamespaceKeyFunc
	}
	f := &RealFIFO{
		items:     make([]Delta, 0, 10),
		synced:    initlist.New(),
		keyFunc:   opts.KeyFunction,
		known:     opts.KnownObjects,
		transform: opts.Transformer,
		atomic:    opts.AtomicEvents,
		unlock:    opts.UnlockWhileProcessing,
		bookmarks: opts.EmitDeltaTypeBookmark,
		metrics:   metrics.ForQueue(opts.Identifier, opts.MetricsProvider),
		timed:     opts.Identifier.Reserved(),
		clock:     opts.Clock,
		name:      cmp.Or(opts.Identifier.Name(), opts.Name, "RealFIFO"),
	}
	if f.clock == nil {
		f.clock = clock.RealClock{}
	}
	f.logger = namedLogger(opts.Logger, f.name)
	f.cond.L = &f.mu
	return f
}

func checkOptions(opts RealFIFOOptions) {
	const prefix = "coding error: "
	switch {
	case opts.AtomicEvents && opts.KnownObjects != nil:
		panic(prefix + "knownObjects must not be provided when AtomicEvents is true")
	case !opts.AtomicEvents && opts.UnlockWhileProcessing:
		panic(prefix + "UnlockWhileProcessing must be false when AtomicEvents is false")
	case !opts.AtomicEvents && opts.KnownObjects == nil:
		panic(prefix + "knownObjects must be provided when AtomicEvents is false")
	case !opts.AtomicEvents && opts.EmitDeltaTypeBookmark:
		panic(prefix + "EmitDeltaTypeBookmark must be false when AtomicEvents is false")
	}
}

// KeyOf keys obj as the queue does: a Delta or Deltas by its (newest)
// object, a tombstone by its key, anything else by the key function.
func (f *RealFIFO) KeyOf(obj any) (string, error) {
	if d, ok := obj.(Delta); ok {
		obj = d.Object
	}
	return keyOf(f.keyFunc, obj)
}

// Name is the queue's name (see RealFIFOOptions.Name).
func (f *RealFIFO) Name() string { return f.name }

// Transformer returns the queue's transformer.
func (f *RealFIFO) Transformer() TransformFunc { return f.transform }

// Add queues an Added delta.
func (f *RealFIFO) Add(obj any) error { return f.write(Added, obj) }

// Update queues an Updated delta.
func (f *RealFIFO) Update(obj any) error { return f.write(Updated, obj) }

// Delete queues a Deleted delta, whether or not anybody knew the object.
func (f *RealFIFO) Delete(obj any) error { return f.write(Deleted, obj) }

func (f *RealFIFO) write(t DeltaType, obj any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.synced.Populate()
	return f.appendLocked(t, obj, true)
}

// appendLocked queues one delta. obj must be keyable, though the key is
// not kept: the consumer keys it again.
func (f *RealFIFO) appendLocked(t DeltaType, obj any, transform bool) error {
	if _, err := f.KeyOf(obj); err != nil {
		return store.KeyError{Obj: obj, Err: err}
	}
	obj, err := transformIf(f.transform, transform, obj)
	if err != nil {
		return err
	}
	f.pushLocked(Delta{t, obj})
	return nil
}

// pushLocked queues d and publishes the new length.
func (f *RealFIFO) pushLocked(d Delta) {
	f.items = append(f.items, d)
	f.cond.Broadcast()
	f.metrics.QueuedItems.Set(float64(len(f.items)))
}

// Bookmark queues a Bookmark delta carrying rv, if the queue emits them;
// otherwise it does nothing. It does not count as a write for HasSynced.
func (f *RealFIFO) Bookmark(rv string) error {
	if !f.bookmarks {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	// Not pushLocked: client-go leaves the queued-items gauge as it was
	// here, so it reads one short until the next change (R8).
	f.items = append(f.items, Delta{Bookmark, BookmarkInfo{ResourceVersion: rv}})
	f.cond.Broadcast()
	return nil
}

// Pop waits for a delta, removes it and calls process on it as a Deltas of
// length one. It returns that Deltas and process's error; on a closed,
// empty queue, fifo.ErrClosed. The initial-list count drops only after
// process returns (R5), so HasSynced never turns true while the last
// initial delta is still being processed.
func (f *RealFIFO) Pop(process fifo.PopProcessFunc) (any, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.waitLocked(); err != nil {
		return nil, err
	}
	inInitialList := !f.synced.Synced()
	popped := Deltas{f.items[0]}
	f.items[0] = Delta{} // let the object be collected once processed
	f.items = f.items[1:]
	f.popped++
	defer f.poppedLocked(1)
	f.metrics.QueuedItems.Set(float64(len(f.items)))
	err := f.processLocked(func() error { return process(popped, inInitialList) })
	return popped, err
}

// waitLocked blocks until a delta is queued, or returns fifo.ErrClosed if
// the queue is closed and empty.
func (f *RealFIFO) waitLocked() error {
	for len(f.items) == 0 {
		if f.closed {
			return fifo.ErrClosed
		}
		f.cond.Wait()
	}
	return nil
}

// poppedLocked counts n deltas as delivered, after processing.
func (f *RealFIFO) poppedLocked(n int) {
	f.popped -= n
	f.synced.Popped(n)
	f.synced.Check()
}

// processLocked runs process, without the lock when the queue unlocks
// while processing and fewer than two full batches are queued (beyond
// that, holding the lock is what slows the producer down), and publishes
// how long it took (not when it panics, as in client-go).
func (f *RealFIFO) processLocked(process func() error) error {
	if f.unlock && len(f.items) < 2*batchSize {
		f.mu.Unlock()
		defer f.mu.Lock()
	}
	if !f.timed {
		return process()
	}
	start := f.clock.Now()
	err := process()
	f.metrics.ProcessingLatency.Observe(f.clock.Since(start).Seconds())
	return err
}

// Close wakes every waiting Pop. Pop keeps returning deltas until the
// queue is empty, then fifo.ErrClosed.
func (f *RealFIFO) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	f.cond.Broadcast()
}

// IsClosed reports whether Close has been called.
func (f *RealFIFO) IsClosed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closed
}

// HasSynced reports whether the initial list has been popped, or a write
// came before any Replace.
func (f *RealFIFO) HasSynced() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.synced.Synced()
}

// Done is closed when HasSynced turns true; it can be read without the lock.
func (f *RealFIFO) Done() <-chan struct{} { return f.synced.Done() }

// Len is the number of queued deltas.
func (f *RealFIFO) Len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.items)
}

// Unfinished is the number of deltas queued or popped and still being
// processed (with UnlockWhileProcessing, Len drops before processing
// ends; this does not). Not in client-go: a simulator uses it to know the
// queue's work is done.
func (f *RealFIFO) Unfinished() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.items) + f.popped
}
