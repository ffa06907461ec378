package synctrack

import (
	"sync"
	"sync/atomic"
)

// Lazy is a value that is evaluated when Get asks for it, kept, and
// evaluated again only after Notify. Set Evaluate before the first Get;
// it may be called from several goroutines over time, but one
// generation calls it for one Get at a time. A Lazy must not be copied
// after first use.
type Lazy[T any] struct {
	// Evaluate works the value out. A generation takes the function set
	// when it starts (at Notify, or at the first Get), so changing it
	// affects the next generation, not the current one (L5).
	Evaluate func() (T, error)

	// current is the generation Gets use now; nil before the first Get or
	// Notify.
	current atomic.Pointer[generation[T]]
}

// generation is one stretch between two Notifies: the Evaluate it calls,
// and the value it kept once an evaluation succeeded.
type generation[T any] struct {
	evaluate func() (T, error)
	// mu is held for the whole of an evaluation, so that Gets arriving
	// meanwhile wait for it instead of evaluating too (L3).
	mu sync.Mutex
	// value is nil until an evaluation succeeds; then never changes.
	value atomic.Pointer[T]
}

// Notify says the value may have changed: the next Get evaluates again.
// Gets already waiting for or running an evaluation finish in the
// generation they started in, and their result is not kept for anyone
// who comes after this call (L2).
func (z *Lazy[T]) Notify() { z.current.Store(z.newGeneration()) }

// Get returns the current generation's value, evaluating it if no
// evaluation of this generation has succeeded yet. Gets that find an
// evaluation in progress wait for it and share its value; an error is
// returned but not kept, so the next Get evaluates again (L1, L3, L4).
func (z *Lazy[T]) Get() (T, error) {
	return z.generation().get()
}

// generation is the current generation, starting the first one if there
// is none yet. Two first Gets racing agree on one: only one
// CompareAndSwap wins, and both then load the winner.
func (z *Lazy[T]) generation() *generation[T] {
	if g := z.current.Load(); g != nil {
		return g
	}
	z.current.CompareAndSwap(nil, z.newGeneration())
	return z.current.Load()
}

func (z *Lazy[T]) newGeneration() *generation[T] {
	return &generation[T]{evaluate: z.Evaluate}
}

// get returns the kept value, or evaluates under the lock. The value is
// looked at twice: once without the lock (the common case, a value kept
// long ago), and again with it, since the evaluation this Get waited for
// may have kept one.
func (g *generation[T]) get() (T, error) {
	if v := g.value.Load(); v != nil {
		return *v, nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if v := g.value.Load(); v != nil {
		return *v, nil
	}
	v, err := g.evaluate()
	if err == nil {
		g.value.Store(&v)
	}
	return v, err
}
