package fifo

import "errors"

// ErrClosed is returned by Pop (and PopBatch) when the queue is closed and
// has nothing left to give. Writes are still accepted after Close; only an
// empty, closed queue stops a consumer. client-go's counterpart is
// cache.ErrFIFOClosed, whose text it has (the same for every queue, as in
// client-go).
var ErrClosed = errors.New("DeltaFIFO: manipulating with closed queue")

// PopProcessFunc processes one popped item. isInInitialList is true while
// the queue has not yet delivered the whole of its first Replace: that is
// how an informer tells its handlers "this Add is part of the initial
// list". Its error is returned by Pop; the item is not requeued.
type PopProcessFunc func(obj any, isInInitialList bool) error
