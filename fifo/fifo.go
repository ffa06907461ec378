package fifo

import (
	"sort"
	"sync"

	"github.com/cachelab/cachelab/internal/initlist"
	"github.com/cachelab/cachelab/store"
)

// Options configures a FIFO.
type Options struct {
	// KeyFunc keys objects; nil means store.MetaNamespaceKeyFunc.
	KeyFunc store.KeyFunc
}

// FIFO is a queue that holds at most one object per key: the newest. A key
// keeps the place it got when first queued (Q1), so a busy object cannot
// starve the others, and a consumer always gets the latest state.
//
// It mirrors client-go's FIFO (fifo.go).
type FIFO struct {
	mu      sync.Mutex
	cond    sync.Cond // signalled when the queue grows or closes
	items   map[string]any
	queue   []string // keys in pop order; may hold keys whose item was deleted
	synced  *initlist.Tracker
	keyFunc store.KeyFunc
	closed  bool
}

// New returns an empty, open FIFO.
func New(opts Options) *FIFO {
	if opts.KeyFunc == nil {
		opts.KeyFunc = store.MetaNamespaceKeyFunc
	}
	f := &FIFO{items: map[string]any{}, synced: initlist.New(), keyFunc: opts.KeyFunc}
	f.cond.L = &f.mu
	return f
}

// Add queues obj, or replaces the queued object with the same key without
// moving it (Q1).
func (f *FIFO) Add(obj any) error {
	key, err := f.keyFunc(obj)
	if err != nil {
		return store.KeyError{Obj: obj, Err: err}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.synced.Populate()
	if _, queued := f.items[key]; !queued {
		f.queue = append(f.queue, key)
	}
	f.items[key] = obj
	f.cond.Broadcast()
	return nil
}

// Update is the same as Add.
func (f *FIFO) Update(obj any) error { return f.Add(obj) }

// Delete drops the queued object with obj's key. The key stays in the
// queue and Pop skips it (Q2); this keeps Delete O(1).
func (f *FIFO) Delete(obj any) error {
	key, err := f.keyFunc(obj)
	if err != nil {
		return store.KeyError{Obj: obj, Err: err}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.synced.Populate()
	delete(f.items, key)
	return nil
}

// Pop waits for an object, removes it, and calls process on it under the
// queue's lock, so nothing is queued while process runs. It returns the
// object and process's error. On a closed, empty queue it returns
// ErrClosed.
//
// Sync is checked only when Pop returns, after process: HasSynced turns
// true after the last initial object has been processed, not before.
func (f *FIFO) Pop(process PopProcessFunc) (any, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	defer f.synced.Check()
	for {
		for len(f.queue) == 0 {
			if f.closed {
				return nil, ErrClosed
			}
			f.cond.Wait()
		}
		inInitialList := !f.synced.Synced()
		key := f.queue[0]
		f.queue = f.queue[1:]
		f.synced.Popped(1) // a deleted key still counts (Q2)
		obj, live := f.items[key]
		if !live {
			continue
		}
		delete(f.items, key)
		return obj, process(obj, inInitialList)
	}
}

// Replace makes list the whole content of the queue, dropping queued keys
// it does not name (Q3). Keys are queued in list order, each once, holding
// the last object listed for it. The first Replace (before any other
// write) defines the initial list that HasSynced waits for. The
// resourceVersion is ignored.
//
// client-go queues the keys in map order, that is, at random; list order is
// one of the orders client-go can produce, chosen so traces are stable.
func (f *FIFO) Replace(list []any, _ string) error {
	items := make(map[string]any, len(list))
	order := make([]string, 0, len(list))
	for _, obj := range list {
		key, err := f.keyFunc(obj)
		if err != nil {
			return store.KeyError{Obj: obj, Err: err}
		}
		if _, seen := items[key]; !seen {
			order = append(order, key)
		}
		items[key] = obj
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.synced.FirstReplace(len(items))
	f.items, f.queue = items, order
	if len(order) > 0 {
		f.cond.Broadcast()
	}
	return nil
}

// Resync queues again every held object whose key is not queued. In a
// FIFO that cannot happen through the public methods, so it is a no-op in
// practice; it exists because the reflector calls it on every queue.
// Keys are appended in sorted order (client-go: map order).
func (f *FIFO) Resync() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	queued := make(map[string]bool, len(f.queue))
	for _, key := range f.queue {
		queued[key] = true
	}
	var missing []string
	for key := range f.items {
		if !queued[key] {
			missing = append(missing, key)
		}
	}
	sort.Strings(missing)
	f.queue = append(f.queue, missing...)
	if len(f.queue) > 0 {
		f.cond.Broadcast()
	}
	return nil
}

// Close wakes every waiting Pop. Pop keeps returning objects until the
// queue is empty, then ErrClosed (Q4).
func (f *FIFO) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	f.cond.Broadcast()
}

// IsClosed reports whether Close has been called.
func (f *FIFO) IsClosed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closed
}

// HasSynced reports whether the initial list has been popped, or a write
// came before any Replace. Do not call it from inside process (Pop holds
// the lock it needs); read Done instead.
func (f *FIFO) HasSynced() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.synced.Synced()
}

// Done is closed when HasSynced turns true.
func (f *FIFO) Done() <-chan struct{} { return f.synced.Done() }

// Len is the number of objects a Pop could return now (queued keys whose
// object was deleted do not count).
func (f *FIFO) Len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.items)
}
