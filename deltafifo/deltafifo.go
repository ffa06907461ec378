package deltafifo

import (
	"cmp"
	"fmt"
	"k8s.io/klog/v2"
	"sync"

	"github.com/cachelab/cachelab/fifo"
	"github.com/cachelab/cachelab/internal/initlist"
	"github.com/cachelab/cachelab/store"
)

// DeltaFIFOOptions configures a DeltaFIFO.
type DeltaFIFOOptions struct {
	// KeyFunction keys objects; nil means store.MetaNamespaceKeyFunc.
	KeyFunction store.KeyFunc
	// KnownObjects is the consumer's cache. With it, Delete of an unknown
	// key is dropped only if the cache does not know it either, Replace
	// makes tombstones for cached keys a relist no longer lists, and
	// Resync queues a Sync for every cached key. Without it, Resync does
	// nothing.
	KnownObjects KeyListerGetter
	// EmitDeltaTypeReplaced makes Replace queue Replaced deltas instead of
	// Sync, so a consumer can tell a relist from a resync.
	EmitDeltaTypeReplaced bool
	// Transformer runs once on every object as it enters the queue (D8).
	Transformer TransformFunc
	// Name names the queue where it is waited for (Name, and a
	// controller's HasSyncedChecker) and its logger; "DeltaFIFO" if empty.
	Name string
	// Logger is where the queue reports lookup errors (through
	// utilruntime.HandleErrorWithLogger) and vanished keys; the global
	// klog logger at the time the queue is made if nil.
	Logger *klog.Logger
}

// DeltaFIFO queues, per key, every change since the key was last popped,
// and pops all of them together (Deltas). It is the queue of the classic
// informer stack; client-go's default informers use RealFIFO instead.
//
// It mirrors client-go's DeltaFIFO (delta_fifo.go).
type DeltaFIFO struct {
	mu           sync.Mutex
	cond         sync.Cond // signalled when the queue grows or closes
	items        map[string]Deltas
	queue        []string // keys in pop order; each key once, each with deltas
	synced       *initlist.Tracker
	keyFunc      store.KeyFunc
	known        KeyListerGetter
	emitReplaced bool
	transform    TransformFunc
	closed       bool
	name         string
	logger       klog.Logger
}

// NewDeltaFIFO returns an empty, open DeltaFIFO.
func NewDeltaFIFO(opts DeltaFIFOOptions) *DeltaFIFO {
	if opts.KeyFunction == nil {
		opts.KeyFunction = store.MetaNamespaceKeyFunc
	}
	f := &DeltaFIFO{
		items:        map[string]Deltas{},
		synced:       initlist.New(),
		keyFunc:      opts.KeyFunction,
		known:        opts.KnownObjects,
		emitReplaced: opts.EmitDeltaTypeReplaced,
		transform:    opts.Transformer,
		name:         cmp.Or(opts.Name, "DeltaFIFO"),
	}
	f.logger = namedLogger(opts.Logger, f.name)
	f.cond.L = &f.mu
	return f
}

// namedLogger is logger, or the global one, named name (as client-go's
// queues name theirs).
func namedLogger(logger *klog.Logger, name string) klog.Logger {
	l := klog.Background()
	if logger != nil {
		l = *logger
	}
	return klog.LoggerWithName(l, name)
}

// Name is the queue's name: the one given, or "DeltaFIFO".
func (f *DeltaFIFO) Name() string { return f.name }

// KeyOf keys obj as the queue does: a Deltas by its newest object, a
// tombstone by its key, anything else by the key function.
func (f *DeltaFIFO) KeyOf(obj any) (string, error) { return keyOf(f.keyFunc, obj) }

// Transformer returns the queue's transformer, so a reflector can apply
// the same one to its own temporary store.
func (f *DeltaFIFO) Transformer() TransformFunc { return f.transform }

// Add queues an Added delta for obj. Like every write, it marks the queue
// populated, even if obj then cannot be keyed.
func (f *DeltaFIFO) Add(obj any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.synced.Populate()
	return f.enqueueLocked(Added, obj, true)
}

// Update queues an Updated delta for obj.
func (f *DeltaFIFO) Update(obj any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.synced.Populate()
	return f.enqueueLocked(Updated, obj, true)
}

// Delete queues a Deleted delta for obj, unless nobody knows the key:
// neither the queue nor KnownObjects (or the queue alone, without
// KnownObjects). Then it does nothing, but still marks the queue
// populated (D3).
func (f *DeltaFIFO) Delete(obj any) error {
	key, err := f.KeyOf(obj)
	if err != nil {
		return store.KeyError{Obj: obj, Err: err}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.synced.Populate()
	if !f.knowsLocked(key) {
		return nil
	}
	return f.enqueueLocked(Deleted, obj, true)
}

// knowsLocked reports whether a delete of key is worth queueing. A failing
// KnownObjects lookup counts as "known": better a spurious delete than a
// lost one.
func (f *DeltaFIFO) knowsLocked(key string) bool {
	if _, queued := f.items[key]; queued {
		return true
	}
	if f.known == nil {
		return false
	}
	_, exists, err := f.known.GetByKey(key)
	return err != nil || exists
}

// enqueueLocked appends one delta to obj's key, transforming obj first if
// transform is wanted (D8), and queues the key if it was not queued (D1).
func (f *DeltaFIFO) enqueueLocked(t DeltaType, obj any, transform bool) error {
	key, err := f.KeyOf(obj)
	if err != nil {
		return store.KeyError{Obj: obj, Err: err}
	}
	if obj, err = transformIf(f.transform, transform, obj); err != nil {
		return err
	}
	old, queued := f.items[key]
	f.items[key] = dedupDeletes(append(old, Delta{t, obj}))
	if !queued {
		f.queue = append(f.queue, key)
	}
	f.cond.Broadcast()
	return nil
}

// dedupDeletes merges two trailing Deleted deltas into one (D2): a delete
// seen twice (from a watch and from a relist, say) is one delete. The older
// is kept, unless it is only a tombstone and the newer is the real thing.
// Only the last two deltas are compared.
func dedupDeletes(d Deltas) Deltas {
	n := len(d)
	if n < 2 || d[n-1].Type != Deleted || d[n-2].Type != Deleted {
		return d
	}
	if isTombstone(d[n-2].Object) {
		d[n-2] = d[n-1]
	}
	return d[:n-1]
}

// Pop waits for a key, removes it with all its deltas, and calls process
// on them under the queue's lock. It returns the Deltas and process's
// error; the deltas are not requeued on error (D7). On a closed, empty
// queue it returns fifo.ErrClosed.
//
// The initial-list count drops *before* process runs (D6), so inside the
// last initial process call the queue already reports synced; and since
// Pop holds the lock, calling HasSynced from process deadlocks. Read Done
// instead.
func (f *DeltaFIFO) Pop(process fifo.PopProcessFunc) (any, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for len(f.queue) == 0 {
		if f.closed {
			return nil, fifo.ErrClosed
		}
		f.cond.Wait()
	}
	inInitialList := !f.synced.Synced()
	key := f.queue[0]
	f.queue = f.queue[1:]
	f.synced.Popped(1)
	f.synced.Check()
	deltas, ok := f.items[key]
	if !ok {
		panic(fmt.Sprintf("deltafifo: invariant broken: key %q is queued but has no deltas", key))
	}
	delete(f.items, key)
	return deltas, process(deltas, inInitialList)
}

// Close wakes every waiting Pop. Pop keeps returning deltas until the
// queue is empty, then fifo.ErrClosed; writes are still accepted (D7).
func (f *DeltaFIFO) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	f.cond.Broadcast()
}

// IsClosed reports whether Close has been called.
func (f *DeltaFIFO) IsClosed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closed
}

// HasSynced reports whether the initial list has been popped, or a write
// came before any Replace.
func (f *DeltaFIFO) HasSynced() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.synced.Synced()
}

// Done is closed when HasSynced turns true; it can be read without the lock.
func (f *DeltaFIFO) Done() <-chan struct{} { return f.synced.Done() }

// Len is the number of queued keys.
func (f *DeltaFIFO) Len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.queue)
}

// Unfinished is the number of keys queued or being processed. Pop
// processes under the lock, so this waits for a process call in progress
// and then equals Len. Not in client-go: a simulator uses it to know the
// queue's work is done.
func (f *DeltaFIFO) Unfinished() int { return f.Len() }
