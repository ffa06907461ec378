package workqueue

import (
	"container/heap"
	"time"
)

// waiting holds the items AddAfter delays until their time: a min-heap on
// readyAt, and an index by item so that an item waits at most once.
//
// It is the delaying queue's steppable core: it never reads a clock and
// starts nothing; the caller says what time it is.
//
// The heap is container/heap with "earlier readyAt first" as its only
// order, exactly as client-go's waitingForQueue. That matters for items
// due at the same instant: they come out in whatever order the heap's
// sifting leaves them, not in the order they were added (W8), and only
// the same heap, driven by the same Push, Fix and Pop calls, gives the
// same order.
type waiting[T comparable] struct {
	heap   waitHeap[T]
	byItem map[T]*waitEntry[T]
}

type waitEntry[T any] struct {
	item    T
	readyAt time.Time
	index   int // position in the heap, kept by Swap and Push
}

// insert makes item wait until readyAt. An item already waiting keeps the
// earlier of its two times: a second AddAfter can bring it forward, never
// push it back (W9). It reports whether the earliest due time changed, the
// only case in which a loop sleeping until that time must wake.
func (w *waiting[T]) insert(item T, readyAt time.Time) (earliest bool) {
	if e, ok := w.byItem[item]; ok {
		if e.readyAt.After(readyAt) {
			e.readyAt = readyAt
			heap.Fix(&w.heap, e.index)
			return e.index == 0
		}
		return false
	}
	if w.byItem == nil {
		w.byItem = map[T]*waitEntry[T]{}
	}
	e := &waitEntry[T]{item: item, readyAt: readyAt}
	heap.Push(&w.heap, e)
	w.byItem[item] = e
	return e.index == 0
}

// popReady removes every item due at or before now, earliest first, and
// gives each to add.
func (w *waiting[T]) popReady(now time.Time, add func(T)) {
	for len(w.heap) > 0 && !w.heap[0].readyAt.After(now) {
		e := heap.Pop(&w.heap).(*waitEntry[T])
		delete(w.byItem, e.item)
		add(e.item)
	}
}

// next reports when the earliest waiting item is due.
func (w *waiting[T]) next() (readyAt time.Time, ok bool) {
	if len(w.heap) == 0 {
		return time.Time{}, false
	}
	return w.heap[0].readyAt, true
}

// len is the number of waiting items.
func (w *waiting[T]) len() int { return len(w.heap) }

// waitHeap implements heap.Interface; use it through container/heap only.
type waitHeap[T any] []*waitEntry[T]

func (h waitHeap[T]) Len() int           { return len(h) }
func (h waitHeap[T]) Less(i, j int) bool { return h[i].readyAt.Before(h[j].readyAt) }
func (h waitHeap[T]) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}

func (h *waitHeap[T]) Push(x any) {
	e := x.(*waitEntry[T])
	e.index = len(*h)
	*h = append(*h, e)
}

func (h *waitHeap[T]) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	e.index = -1
	return e
}
