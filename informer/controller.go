package informer

import (
	"context"
	"errors"
	"sync"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	"github.com/cachelab/cachelab/deltafifo"
	"github.com/cachelab/cachelab/fifo"
	"github.com/cachelab/cachelab/reflector"
)

// runController is client-go's controller.Run for the shared informer:
// see runLoop.
func (s *SharedIndexInformer) runController(ctx context.Context, q queue) {
	runLoop(ctx, q, s.reflector, func() error { return s.processNext(q) })
}

// runLoop is client-go's controller.Run: the reflector runs in its own
// goroutine, the processing loop in this one, and ctx's end closes the
// queue, which ends the loop once the queue is drained of what Pop had.
//
//	etcd ─▶ ListerWatcher ─▶ Reflector ─▶ queue ─▶ processNext ─▶ store
//	                                                          └──▶ handlers
//
// A panic while processing (an index function's, say, or in a plain
// informer a handler's) is handled as client-go's wait.UntilWithContext
// handles it (P14): logged through ctx's logger, utilruntime.PanicHandlers
// run, and unless utilruntime.ReallyCrash is false the process crashes. If
// it is false, the item being processed is lost and processing starts
// again a second later, of real time. If it is true, the panic leaves
// runLoop at once, without waiting for the reflector (as client-go's
// Run, whose wg.Wait is not deferred): a plain informer's caller can
// recover it from Run, and the reflector runs on until ctx ends.
func runLoop(ctx context.Context, q interface{ Close() }, r *reflector.Reflector, processNext func() error) {
	defer utilruntime.HandleCrashWithContext(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		<-ctx.Done()
		q.Close()
	})
	wg.Go(func() { r.Run(ctx) })
	for !processLoop(ctx, processNext) {
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
			continue
		}
		break
	}
	wg.Wait()
}

// processLoop processes until the queue is closed or ctx ends (true), or
// until processing panics (false).
func processLoop(ctx context.Context, processNext func() error) (ended bool) {
	defer utilruntime.HandleCrashWithContext(ctx)
	for ctx.Err() == nil {
		if err := processNext(); errors.Is(err, fifo.ErrClosed) {
			return true
		}
	}
	return true
}

// processNext pops one item (or, in the default stack, one run of deltas)
// and processes it. Errors other than a closed queue are dropped: the
// delta is gone, as in client-go (P11).
func (s *SharedIndexInformer) processNext(q queue) error {
	if b, ok := q.(batchQueue); ok && s.stack.popsBatches() {
		return b.PopBatch(s.handleBatch, s.handleSingle)
	}
	_, err := q.Pop(s.handleSingle)
	return err
}

// handleSingle is the process function for one popped item.
func (s *SharedIndexInformer) handleSingle(obj any, inInitialList bool) error {
	s.blockDeltas.Lock()
	defer s.blockDeltas.Unlock()
	deltas, ok := obj.(deltafifo.Deltas)
	if !ok {
		return errors.New("informer: object given as Process argument is not Deltas")
	}
	s.trace(Event{Step: StepPop, Deltas: deltas, InInitialList: inInitialList})
	return s.proc.processDeltas(deltas, inInitialList)
}

// handleBatch is the process function for a run of 2+ deltas (P12).
func (s *SharedIndexInformer) handleBatch(deltas []deltafifo.Delta, inInitialList bool) error {
	s.blockDeltas.Lock()
	defer s.blockDeltas.Unlock()
	s.trace(Event{Step: StepPopBatch, Deltas: deltas, InInitialList: inInitialList})
	return s.proc.processBatch(deltas, inInitialList)
}
