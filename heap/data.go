package heap

import (
	stdheap "container/heap"
)

// heapItem is one stored object and its place in the heap.
type heapItem struct {
	obj   any
	index int // position in heapData.queue and heapData.order
}

// heapData is the heap's state, with no lock and no waiting: a map from
// key to entry, and the entries in heap order.
//
// Invariants, for every i < Len(): items[queue[i]] == order[i] and
// order[i].index == i; and every stored key is in queue exactly once.
// queue and order are the same heap seen two ways: queue by key (what
// Get, Delete and the tests that look inside read), order by entry (what
// Less and Swap use, so that sifting looks nothing up in the map).
//
// The field names are client-go's: its heap_test.go reads items, queue,
// obj and index directly, and keeping them lets that test run here with
// only its package clause changed.
type heapData struct {
	items map[string]*heapItem
	queue []string
	order []*heapItem
	less  LessFunc
}

func newHeapData(less LessFunc) *heapData {
	return &heapData{items: map[string]*heapItem{}, less: less}
}

// set stores obj under key: a stored key gets the new object and moves to
// where it now belongs (B1), a new key is pushed.
func (h *heapData) set(key string, obj any) {
	if item, ok := h.items[key]; ok {
		item.obj = obj
		stdheap.Fix(h, item.index)
		return
	}
	stdheap.Push(h, keyed{key, &heapItem{obj: obj}})
}

// setIfAbsent pushes obj unless key is stored (B2).
func (h *heapData) setIfAbsent(key string, obj any) {
	if _, ok := h.items[key]; !ok {
		stdheap.Push(h, keyed{key, &heapItem{obj: obj}})
	}
}

// remove deletes key's entry, reporting whether there was one.
func (h *heapData) remove(key string) bool {
	item, ok := h.items[key]
	if ok {
		stdheap.Remove(h, item.index)
	}
	return ok
}

// popMin removes and returns the smallest object; the heap must not be
// empty.
func (h *heapData) popMin() any {
	return stdheap.Pop(h).(*heapItem).obj
}

// keyed is what set hands to container/heap's Push.
type keyed struct {
	key  string
	item *heapItem
}

// The rest implements container/heap.Interface; use it through
// container/heap only. Less, Swap, Push and Pop move entries as
// client-go's heapData (heap.go) moves them, so the two sift alike.

// Len is the number of stored objects.
func (h *heapData) Len() int { return len(h.queue) }

// Less reports whether the object at i goes before the one at j.
func (h *heapData) Less(i, j int) bool { return h.less(h.order[i].obj, h.order[j].obj) }

// Swap exchanges two places, and tells the entries where they now are.
func (h *heapData) Swap(i, j int) {
	h.queue[i], h.queue[j] = h.queue[j], h.queue[i]
	h.order[i], h.order[j] = h.order[j], h.order[i]
	h.order[i].index, h.order[j].index = i, j
}

// Push appends a keyed entry at the end; container/heap then sifts it up.
func (h *heapData) Push(x any) {
	k := x.(keyed)
	k.item.index = len(h.queue)
	h.items[k.key] = k.item
	h.queue = append(h.queue, k.key)
	h.order = append(h.order, k.item)
}

// Pop removes the last entry, which container/heap has just swapped
// there, and returns it.
func (h *heapData) Pop() any {
	last := len(h.queue) - 1
	key, item := h.queue[last], h.order[last]
	h.order[last] = nil // let the object go
	h.queue, h.order = h.queue[:last], h.order[:last]
	delete(h.items, key)
	return item
}
