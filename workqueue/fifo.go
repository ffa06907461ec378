package workqueue

// fifo is a slice used as a queue: push at the back, pop at the front. Its
// consumed front is reused instead of left to the garbage collector: when
// the slice is full and at least half of it is consumed, the live part is
// moved down. Both operations are amortised O(1).
type fifo[T any] struct {
	items []T
	head  int // items[:head] are consumed (and zeroed)
}

func (f *fifo[T]) len() int { return len(f.items) - f.head }

func (f *fifo[T]) push(item T) {
	if len(f.items) == cap(f.items) && f.head > 0 && f.head >= len(f.items)/2 {
		n := copy(f.items, f.items[f.head:])
		clear(f.items[n:])
		f.items = f.items[:n]
		f.head = 0
	}
	f.items = append(f.items, item)
}

// pop removes the front item; the fifo must not be empty.
func (f *fifo[T]) pop() T {
	var zero T
	item := f.items[f.head]
	f.items[f.head] = zero // let the garbage collector have it
	f.head++
	if f.head == len(f.items) {
		f.items, f.head = f.items[:0], 0
	}
	return item
}
