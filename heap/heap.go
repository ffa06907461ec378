package heap

import (
	"errors"
	"sort"
	"sync"

	"github.com/cachelab/cachelab/store"
)

// closedMsg is client-go's text for a closed heap (heap.go closedMsg).
const closedMsg = "heap is closed"

// ErrClosed is returned by Add, Update, AddIfNotPresent and BulkAdd once
// the heap is closed, and by Pop once it is closed and empty (B5). Its
// text is client-go's, which has no error value, only the text.
var ErrClosed = errors.New(closedMsg)

// ErrNotFound is returned by Delete when no object has the key (B7).
var ErrNotFound = errors.New("object not found")

// LessFunc reports whether a goes before b: Pop returns the object that
// no other goes before. It mirrors client-go's LessFunc, whose objects are
// `any` because its queues hold any kind of object.
type LessFunc func(a, b any) bool

// Heap is a thread-safe keyed priority queue: one object per key, popped
// smallest first (see the package doc). It mirrors client-go's Heap
// (heap.go).
type Heap struct {
	lock    sync.RWMutex
	cond    sync.Cond // on lock; broadcast when an add succeeds or the heap closes
	data    *heapData
	keyFunc store.KeyFunc
	closed  bool
}

// NewHeap returns an empty, open heap that keys objects with keyFn and
// orders them with lessFn.
func NewHeap(keyFn store.KeyFunc, lessFn LessFunc) *Heap {
	h := &Heap{data: newHeapData(lessFn), keyFunc: keyFn}
	h.cond.L = &h.lock
	return h
}

// key runs the key function, wrapping its error as client-go does.
func (h *Heap) key(obj any) (string, error) {
	key, err := h.keyFunc(obj)
	if err != nil {
		return "", store.KeyError{Obj: obj, Err: err}
	}
	return key, nil
}

// Add stores obj under its key, replacing the object stored there and
// moving it to where obj belongs (B1), and wakes every waiting Pop (B4).
// The key is computed before the heap is locked, so an object the key
// function refuses gets a store.KeyError even from a closed heap (B5).
func (h *Heap) Add(obj any) error {
	key, err := h.key(obj)
	if err != nil {
		return err
	}
	h.lock.Lock()
	defer h.lock.Unlock()
	if h.closed {
		return ErrClosed
	}
	h.data.set(key, obj)
	h.cond.Broadcast()
	return nil
}

// Update is Add: a key not stored is added.
func (h *Heap) Update(obj any) error { return h.Add(obj) }

// AddIfNotPresent stores obj unless its key is stored already, in which
// case the stored object keeps its value and place (B2). It wakes every
// waiting Pop either way (B4). A consumer that pops an object and puts
// it back to retry uses it, so as not to undo a newer Add by the producer.
func (h *Heap) AddIfNotPresent(obj any) error {
	key, err := h.key(obj)
	if err != nil {
		return err
	}
	h.lock.Lock()
	defer h.lock.Unlock()
	if h.closed {
		return ErrClosed
	}
	h.data.setIfAbsent(key, obj)
	h.cond.Broadcast()
	return nil
}

// BulkAdd adds every object of list, in order, as Add does, under one lock,
// and then wakes every waiting Pop, so that none pops before all are in.
// It checks for a closed heap first. An object the key function refuses
// stops it with a store.KeyError: the objects before it stay added, and no
// Pop is woken (B6).
func (h *Heap) BulkAdd(list []any) error {
	h.lock.Lock()
	defer h.lock.Unlock()
	if h.closed {
		return ErrClosed
	}
	for _, obj := range list {
		key, err := h.key(obj)
		if err != nil {
			return err
		}
		h.data.set(key, obj)
	}
	h.cond.Broadcast()
	return nil
}

// Delete removes the object with obj's key; the rest of obj is ignored.
// It returns ErrNotFound if the key is not stored, and works on a closed
// heap too (B7).
func (h *Heap) Delete(obj any) error {
	key, err := h.key(obj)
	if err != nil {
		return err
	}
	h.lock.Lock()
	defer h.lock.Unlock()
	if !h.data.remove(key) {
		return ErrNotFound
	}
	return nil
}

// Pop removes and returns the smallest object (B3). While the heap is
// empty it waits for an add or Close (B4); once closed, it returns what
// is left and then ErrClosed (B5).
func (h *Heap) Pop() (any, error) {
	h.lock.Lock()
	defer h.lock.Unlock()
	for h.data.Len() == 0 {
		if h.closed {
			return nil, ErrClosed
		}
		h.cond.Wait()
	}
	return h.data.popMin(), nil
}

// List returns every stored object, in key order (client-go's: map order).
func (h *Heap) List() []any {
	h.lock.RLock()
	defer h.lock.RUnlock()
	keys := h.sortedKeysRLocked()
	out := make([]any, len(keys))
	for i, k := range keys {
		out[i] = h.data.items[k].obj
	}
	return out
}

// ListKeys returns every stored key, sorted (client-go's: map order).
func (h *Heap) ListKeys() []string {
	h.lock.RLock()
	defer h.lock.RUnlock()
	return h.sortedKeysRLocked()
}

// sortedKeysRLocked returns a sorted copy of the stored keys.
func (h *Heap) sortedKeysRLocked() []string {
	keys := append(make([]string, 0, len(h.data.queue)), h.data.queue...)
	sort.Strings(keys)
	return keys
}

// Get returns the object stored under obj's key (B7).
func (h *Heap) Get(obj any) (item any, exists bool, err error) {
	key, err := h.key(obj)
	if err != nil {
		return nil, false, err
	}
	return h.GetByKey(key)
}

// GetByKey returns the object stored under key. It never fails; the error
// is there because client-go's has one.
func (h *Heap) GetByKey(key string) (item any, exists bool, err error) {
	h.lock.RLock()
	defer h.lock.RUnlock()
	if it, ok := h.data.items[key]; ok {
		return it.obj, true, nil
	}
	return nil, false, nil
}

// Close closes the heap and wakes every waiting Pop (B5). Closing twice
// is harmless.
func (h *Heap) Close() {
	h.lock.Lock()
	defer h.lock.Unlock()
	h.closed = true
	h.cond.Broadcast()
}

// IsClosed reports whether Close has been called.
func (h *Heap) IsClosed() bool {
	h.lock.RLock()
	defer h.lock.RUnlock()
	return h.closed
}
