package difftest

import (
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/deltafifo"
	"github.com/cachelab/cachelab/fifo"
)

// Popped is what one Pop or PopBatch call handed to its process function.
type Popped struct {
	Deltas []D  // for FIFO: a single D with Type "" and the object
	Batch  bool // PopBatch called processBatch
	// InInitialList is the process function's isInInitialList argument.
	InInitialList bool
	// SyncedInProcess is whether the queue's Done channel was closed while
	// process ran: the only safe way to ask HasSynced there.
	SyncedInProcess bool
}

// ProcessFunc is called by the harness's process function with each
// popped value; its error is what process returns.
type ProcessFunc func(p Popped) error

// Queue is one interface over the six queues of a differential test.
// Methods a queue lacks return nil and do nothing (Bookmark on a FIFO).
type Queue interface {
	Add(obj any) error
	Update(obj any) error
	Delete(obj any) error
	Replace(list []any, rv string) error
	Resync() error
	Bookmark(rv string) error
	// Pop pops once and calls process with what it popped.
	Pop(process ProcessFunc) error
	// PopBatch pops a batch (RealFIFO only; others Pop).
	PopBatch(process ProcessFunc) error
	HasSynced() bool
	Close()
	IsClosed() bool
}

func isDone(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func singleFunc(done <-chan struct{}, process ProcessFunc, deltas bool) func(any, bool) error {
	return func(obj any, initial bool) error {
		p := Popped{InInitialList: initial, SyncedInProcess: isDone(done)}
		if deltas {
			p.Deltas = Norm(obj).([]D)
		} else {
			p.Deltas = []D{{Object: Norm(obj)}}
		}
		return process(p)
	}
}

// --- cachelab ---

// ClFIFO adapts a cachelab fifo.FIFO.
type ClFIFO struct{ *fifo.FIFO }

func (q ClFIFO) Bookmark(string) error { return nil }
func (q ClFIFO) Pop(p ProcessFunc) error {
	_, err := q.FIFO.Pop(singleFunc(q.Done(), p, false))
	return err
}
func (q ClFIFO) PopBatch(p ProcessFunc) error { return q.Pop(p) }

// ClDeltaFIFO adapts a cachelab deltafifo.DeltaFIFO.
type ClDeltaFIFO struct{ *deltafifo.DeltaFIFO }

func (q ClDeltaFIFO) Bookmark(string) error { return nil }
func (q ClDeltaFIFO) Pop(p ProcessFunc) error {
	_, err := q.DeltaFIFO.Pop(singleFunc(q.Done(), p, true))
	return err
}
func (q ClDeltaFIFO) PopBatch(p ProcessFunc) error { return q.Pop(p) }

// ClRealFIFO adapts a cachelab deltafifo.RealFIFO.
type ClRealFIFO struct{ *deltafifo.RealFIFO }

func (q ClRealFIFO) Pop(p ProcessFunc) error {
	_, err := q.RealFIFO.Pop(singleFunc(q.Done(), p, true))
	return err
}
func (q ClRealFIFO) PopBatch(p ProcessFunc) error {
	return q.RealFIFO.PopBatch(func(ds []deltafifo.Delta, initial bool) error {
		return p(Popped{Deltas: Norm(ds).([]D), Batch: true, InInitialList: initial, SyncedInProcess: isDone(q.Done())})
	}, singleFunc(q.Done(), p, true))
}

// --- client-go ---

// CgFIFO adapts client-go's cache.FIFO.
type CgFIFO struct{ *cache.FIFO }

func (q CgFIFO) Bookmark(string) error { return nil }
func (q CgFIFO) Pop(p ProcessFunc) error {
	_, err := q.FIFO.Pop(singleFunc(q.HasSyncedChecker().Done(), p, false))
	return err
}
func (q CgFIFO) PopBatch(p ProcessFunc) error { return q.Pop(p) }

// CgDeltaFIFO adapts client-go's cache.DeltaFIFO.
type CgDeltaFIFO struct{ *cache.DeltaFIFO }

func (q CgDeltaFIFO) Bookmark(string) error { return nil }
func (q CgDeltaFIFO) Pop(p ProcessFunc) error {
	_, err := q.DeltaFIFO.Pop(singleFunc(q.HasSyncedChecker().Done(), p, true))
	return err
}
func (q CgDeltaFIFO) PopBatch(p ProcessFunc) error { return q.Pop(p) }

// CgRealFIFO adapts client-go's cache.RealFIFO.
type CgRealFIFO struct{ *cache.RealFIFO }

func (q CgRealFIFO) Pop(p ProcessFunc) error {
	_, err := q.RealFIFO.Pop(singleFunc(q.HasSyncedChecker().Done(), p, true))
	return err
}
func (q CgRealFIFO) PopBatch(p ProcessFunc) error {
	return q.RealFIFO.PopBatch(func(ds []cache.Delta, initial bool) error {
		return p(Popped{Deltas: Norm(ds).([]D), Batch: true, InInitialList: initial, SyncedInProcess: isDone(q.HasSyncedChecker().Done())})
	}, singleFunc(q.HasSyncedChecker().Done(), p, true))
}
