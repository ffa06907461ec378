// Package initlist tracks the "initial list" of a queue: the items that the
// first Replace put into it. A queue has synced once it has been populated
// and every item of that first list has been popped.
//
// All three queues (fifo.FIFO, deltafifo.DeltaFIFO, deltafifo.RealFIFO) share
// this bookkeeping; they differ only in *when* they call Popped and Check
// relative to the process function, and each says so where it calls them.
//
// The zero value is not ready to use: call New. A Tracker is not safe for
// concurrent use; the owning queue calls it under its own lock.
package initlist

// Tracker is the synced state of one queue.
type Tracker struct {
	populated bool          // a Replace, Add, Update or Delete has happened
	remaining int           // items of the first Replace not yet popped
	done      chan struct{} // closed exactly once, when synced
	closed    bool          // whether done has been closed
}

// New returns a Tracker for an empty, unpopulated queue.
func New() *Tracker {
	return &Tracker{done: make(chan struct{})}
}

// Populate records an Add, Update or Delete. If it is the first write, the
// queue has no initial list to wait for and is synced at once.
func (t *Tracker) Populate() {
	t.populated = true
	t.Check()
}

// FirstReplace records a Replace that put n items into the queue. Only the
// first write counts: a Replace after any other write changes nothing.
func (t *Tracker) FirstReplace(n int) {
	if t.populated {
		return
	}
	t.populated = true
	t.remaining = n
	t.Check()
}

// Popped records that n items have left the queue. Items popped after the
// initial list was delivered do not count. It does not check for sync:
// queues differ in when they do that.
func (t *Tracker) Popped(n int) {
	if t.remaining > 0 {
		t.remaining -= n
	}
}

// Remaining is how many items of the initial list are still queued.
func (t *Tracker) Remaining() int { return t.remaining }

// Check closes Done if the queue is populated and its initial list is
// delivered. It is idempotent, and sync never goes back to false.
func (t *Tracker) Check() {
	if t.populated && t.remaining == 0 && !t.closed {
		t.closed = true
		close(t.done)
	}
}

// Synced reports whether Done has been closed.
func (t *Tracker) Synced() bool { return t.closed }

// Done is closed once the queue has synced. It can be read without the
// queue's lock, which makes it the safe way to ask "synced?" from inside a
// process function that runs under that lock.
func (t *Tracker) Done() <-chan struct{} { return t.done }
