package workqueue

import "sync"

// An item's state in the queue, as two bits.
const (
	// dirty: the item needs processing; it is in the FIFO, or it will be
	// put there when the worker holding it calls Done.
	dirty uint8 = 1 << iota
	// processing: a worker holds the item, between Get and Done.
	processing
)

// Queue is the typed work queue: a FIFO of distinct items handed to workers
// one at a time. Add marks an item dirty and queues it once; Get hands the
// oldest queued item to a worker, which must call Done when finished.
//
// Invariants (W1–W4):
//   - an item is queued at most once, however often it is added (W1);
//   - an item a worker holds is never queued: added again meanwhile, it
//     waits, dirty, and is queued at the back when Done is called (W2);
//   - after ShutDown, Add is ignored, Get drains what is queued, then
//     reports shutdown (W3).
//
// All methods are safe for concurrent use. Costs: O(1) per call.
//
// client-go: util/workqueue/queue.go Typed. There, two sets (dirty,
// processing) hold the state; here one map holds both bits per item, which
// is one lookup instead of two and the same behaviour.
type Queue[T comparable] struct {
	mu   sync.Mutex
	cond sync.Cond // on mu; Get and ShutDownWithDrain wait on it

	fifo  fifo[T]
	state map[T]uint8 // dirty and processing bits; absent means neither
	// held counts the items with the processing bit set.
	held int

	shuttingDown bool
	// drain is set by ShutDownWithDrain while it waits for held to reach 0,
	// and cleared by ShutDown to let it return at once.
	drain bool
}

// New returns an empty queue. It starts no goroutine.
func New[T comparable]() *Queue[T] {
	q := &Queue[T]{state: map[T]uint8{}}
	q.cond.L = &q.mu
	return q
}

// Add marks item as needing processing (W1, W2). A queue shutting down
// ignores it (W3).
func (q *Queue[T]) Add(item T) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.shuttingDown {
		return
	}
	s := q.state[item]
	if s&dirty != 0 {
		return // already waiting for a worker: the adds coalesce
	}
	q.state[item] = s | dirty
	if s&processing != 0 {
		return // Done will queue it
	}
	q.fifo.push(item)
	q.cond.Signal()
}

// Len is the number of queued items: dirty ones a worker does not hold. It
// is for information only; nothing can be decided on it without a race.
func (q *Queue[T]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.fifo.len()
}

// Get blocks until an item is queued, and hands it to the caller, who must
// call Done with it. It returns shutdown = true (and the zero item) only
// once the queue is shutting down and empty (W3).
func (q *Queue[T]) Get() (item T, shutdown bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.fifo.len() == 0 && !q.shuttingDown {
		q.cond.Wait()
	}
	if q.fifo.len() == 0 {
		return item, true
	}
	item = q.fifo.pop()
	s := q.state[item]
	if s&processing == 0 {
		q.held++
	}
	q.state[item] = s&^dirty | processing
	return item, false
}

// Done tells the queue a worker has finished with item. If it was added
// while held, it is queued again now, at the back (W2).
//
// Done trusts its caller, as client-go's does: Done for an item that is
// queued but was never handed out queues it a second time (W4).
func (q *Queue[T]) Done(item T) {
	q.mu.Lock()
	defer q.mu.Unlock()
	s := q.state[item]
	if s&processing != 0 {
		q.held--
	}
	s &^= processing
	if s == 0 {
		delete(q.state, item)
	} else {
		q.state[item] = s
	}
	switch {
	case s&dirty != 0:
		q.fifo.push(item)
		q.cond.Signal()
	case q.held == 0:
		// Wakes one waiter: ShutDownWithDrain, if it waits (or a Get,
		// which finds nothing and waits again, now last in line: W5).
		q.cond.Signal()
	}
}

// ShutDown makes the queue ignore new items and wakes every waiting Get;
// workers drain what is queued, then Get reports shutdown (W3). It also
// releases a ShutDownWithDrain that is still waiting (W6). It does not
// wait for anything.
func (q *Queue[T]) ShutDown() { q.beginShutDown(false) }

// ShutDownWithDrain is ShutDown, then waits until no worker holds an item
// (every Get has had its Done), or until ShutDown is called (W6). A worker
// that never calls Done makes it wait forever.
func (q *Queue[T]) ShutDownWithDrain() {
	q.beginShutDown(true)
	q.waitDrained()
}

// beginShutDown is the first step of both shutdowns: new items are ignored
// from now on, and every waiter wakes to look again.
func (q *Queue[T]) beginShutDown(drain bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.drain = drain
	q.shuttingDown = true
	q.cond.Broadcast()
}

// waitDrained is ShutDownWithDrain's second step: wait until no worker
// holds an item, or until a ShutDown clears drain.
func (q *Queue[T]) waitDrained() {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.held != 0 && q.drain {
		q.cond.Wait()
	}
}

// ShuttingDown reports whether ShutDown or ShutDownWithDrain was called.
func (q *Queue[T]) ShuttingDown() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.shuttingDown
}
