package informer

import "github.com/cachelab/cachelab/deltafifo"

// Step names what the informer's processing is doing; see Event.
type Step string

// The processing steps, in the order a delta goes through them.
const (
	// StepPop: one item popped from the queue (Deltas).
	StepPop Step = "pop"
	// StepPopBatch: a run of deltas popped together (default stack, P12).
	StepPopBatch Step = "pop-batch"
	// StepTransaction: a batch's writes go to the indexer in one
	// transaction of Count entries.
	StepTransaction Step = "transaction"
	// StepNotify: a notification goes out to the handlers (Sync: only to
	// those whose resync is due, P6).
	StepNotify Step = "notify"
	// StepDeliver: a handler is called (Handler names it).
	StepDeliver Step = "deliver"
	// StepSkip: a sync notification (a resync's, or a relist's unchanged
	// object) was not sent to the handlers whose resync is not due
	// (Skipped names them, sorted; P6).
	StepSkip Step = "skip"
)

// Event is one processing step. Fields that do not apply are zero.
// StepDeliver events come from the handlers' own goroutines.
type Event struct {
	Step          Step
	Deltas        []deltafifo.Delta
	InInitialList bool
	Count         int
	Notification  Notification
	Sync          bool
	Handler       string
	Skipped       []string
}
