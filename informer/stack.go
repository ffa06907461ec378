package informer

import (
	"fmt"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/cachelab/cachelab/deltafifo"
	"github.com/cachelab/cachelab/fifo"
	"github.com/cachelab/cachelab/metrics"
	"github.com/cachelab/cachelab/reflector"
	"github.com/cachelab/cachelab/store"
)

// Stack is the set of choices that client-go's feature gates make for an
// informer.
type Stack string

const (
	// Default is client-go v0.37.2 with its default gates: every list is
	// first tried as a watch-list stream (WatchListClient); the queue is a
	// RealFIFO in atomic mode, so a relist is one ReplacedAll delta, a
	// resync one SyncAll, a bookmark a Bookmark delta (InOrderInformers,
	// AtomicFIFO), and it releases its lock while processing
	// (UnlockWhileProcessingFIFO); runs of deltas are popped together and
	// written in one store transaction (InOrderInformersBatchProcess).
	Default Stack = "default"
	// Classic is the stack of the seed documents, most tutorials and the
	// sample-controller diagram: LIST then WATCH, a DeltaFIFO that knows
	// the indexer (KnownObjects) and queues Replaced deltas on a relist,
	// one Pop at a time. client-go still runs it with InOrderInformers and
	// WatchListClient turned off.
	Classic Stack = "classic"
)

// ParseStack turns "default" or "classic" into a Stack.
func ParseStack(s string) (Stack, error) {
	switch Stack(s) {
	case Default, Classic:
		return Stack(s), nil
	}
	return "", fmt.Errorf("informer: unknown stack %q (want %q or %q)", s, Default, Classic)
}

// queue is what the informer needs of its queue: the reflector writes
// into it, the processing loop pops from it.
type queue interface {
	reflector.Store
	Pop(process fifo.PopProcessFunc) (any, error)
	Done() <-chan struct{}
	Close()
	Unfinished() int
}

// batchQueue is a queue that pops runs of deltas (RealFIFO).
type batchQueue interface {
	PopBatch(processBatch deltafifo.ProcessBatchFunc, processSingle fifo.PopProcessFunc) error
}

// queueOptions are what an informer tells the queue it makes: the object
// type, which names the queue ("RealFIFO *v1.Pod", as client-go's
// newQueueFIFO names it), and what a RealFIFO needs to publish its
// metrics (R8; client-go's DeltaFIFO publishes none, nor does cachelab's).
type queueOptions struct {
	objectType any
	id         metrics.InformerNameAndResource
	provider   metrics.Provider
	clock      clock.PassiveClock
	// logger is where the queue reports lookup errors: Run's context's
	// logger for a shared informer, InformerOptions.Logger for a plain one.
	logger *klog.Logger
}

func (st Stack) newQueue(indexer *store.Cache, transform store.TransformFunc, m queueOptions) queue {
	if st == Classic {
		return deltafifo.NewDeltaFIFO(deltafifo.DeltaFIFOOptions{
			KeyFunction:           store.MetaNamespaceKeyFunc,
			KnownObjects:          indexer,
			EmitDeltaTypeReplaced: true,
			Transformer:           transform,
			Name:                  fmt.Sprintf("DeltaFIFO %T", m.objectType),
			Logger:                m.logger,
		})
	}
	return deltafifo.NewRealFIFO(deltafifo.RealFIFOOptions{
		KeyFunction:           store.MetaNamespaceKeyFunc,
		Transformer:           transform,
		AtomicEvents:          true,
		UnlockWhileProcessing: true,
		EmitDeltaTypeBookmark: true,
		Name:                  fmt.Sprintf("RealFIFO %T", m.objectType),
		Logger:                m.logger,
		Identifier:            m.id,
		MetricsProvider:       m.provider,
		Clock:                 m.clock,
	})
}

func (st Stack) usesWatchList() bool { return st != Classic }

func (st Stack) popsBatches() bool { return st != Classic }
