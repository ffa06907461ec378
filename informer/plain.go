package informer

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/cachelab/cachelab/deltafifo"
	"github.com/cachelab/cachelab/fifo"
	"github.com/cachelab/cachelab/metrics"
	"github.com/cachelab/cachelab/reflector"
	"github.com/cachelab/cachelab/store"
)

// The plain controller and the plain informer: the layer between the
// reflector and the shared informer, client-go's Config, New and
// NewInformerWithOptions (controller.go). A Controller is a reflector
// filling a queue and one loop popping it into a process function; a
// plain informer is a Controller whose process function applies the
// deltas to a store and calls one handler, on the processing goroutine.
// That is the difference that matters: a shared informer's handlers run
// on goroutines of their own behind unbounded buffers (P10), a plain
// informer's handler holds up processing while it runs, and its panic is
// a processing panic (P14: the rest of the item is lost, processing
// resumes a second later).

// Queue is what a Controller pops from: a reflector's store that pops,
// says when the first list has been popped, and closes.
type Queue interface {
	reflector.Store
	Pop(process fifo.PopProcessFunc) (any, error)
	HasSynced() bool
	// Done is closed when HasSynced turns true.
	Done() <-chan struct{}
	Close()
}

// Config is a Controller's settings (client-go: Config).
type Config struct {
	// Queue is what the reflector fills and processing pops: a DeltaFIFO
	// or a RealFIFO.
	Queue Queue
	// ListerWatcher is where the reflector gets its data.
	ListerWatcher reflector.ListerWatcher
	// Process handles one popped item.
	Process fifo.PopProcessFunc
	// ProcessBatch, if set and the queue pops batches (RealFIFO), handles
	// a run of 2+ deltas (P12); Process handles the rest.
	ProcessBatch deltafifo.ProcessBatchFunc
	// ObjectType is the type every watched object must have.
	ObjectType runtime.Object
	// ObjectDescription names the type in errors; derived if empty.
	ObjectDescription string
	// FullResyncPeriod is how often the reflector resyncs the queue
	// (0: never), each time ShouldResync (if set) agrees.
	FullResyncPeriod time.Duration
	ShouldResync     func() bool
	// MinWatchTimeout raises the shortest watch timeout (default 5 min).
	MinWatchTimeout time.Duration
	// WatchErrorHandler hears why a ListAndWatch ended with an error.
	WatchErrorHandler reflector.WatchErrorHandler
	// WatchListPageSize is the LIST page size.
	WatchListPageSize int64
	// UseWatchList makes the reflector stream its lists (client-go's
	// WatchListClient gate, on by default).
	UseWatchList bool

	// Clock, RelistClock, Rand and ReflectorTrace are the reflector's
	// (see reflector.Options).
	Clock          clock.Clock
	RelistClock    clock.Clock
	Rand           *rand.Rand
	ReflectorTrace func(reflector.Event)
}

// Controller runs a reflector into a queue and pops the queue into a
// process function (client-go: the controller New returns).
type Controller struct {
	cfg Config

	mu        sync.Mutex
	reflector *reflector.Reflector
}

// NewController returns a Controller for c (client-go: New).
func NewController(c *Config) *Controller {
	return &Controller{cfg: *c}
}

// Run runs the reflector and the processing loop until ctx ends, then
// returns once both have stopped. Run it once.
func (c *Controller) Run(ctx context.Context) {
	r := reflector.New(c.cfg.ListerWatcher, c.cfg.Queue, reflector.Options{
		ExpectedType:      c.cfg.ObjectType,
		TypeDescription:   c.cfg.ObjectDescription,
		ResyncPeriod:      c.cfg.FullResyncPeriod,
		ShouldResync:      c.cfg.ShouldResync,
		MinWatchTimeout:   c.cfg.MinWatchTimeout,
		WatchListPageSize: c.cfg.WatchListPageSize,
		UseWatchList:      c.cfg.UseWatchList,
		WatchErrorHandler: c.cfg.WatchErrorHandler,
		Clock:             c.cfg.Clock,
		RelistClock:       c.cfg.RelistClock,
		Rand:              c.cfg.Rand,
		Trace:             c.cfg.ReflectorTrace,
	})
	c.mu.Lock()
	c.reflector = r
	c.mu.Unlock()
	runLoop(ctx, c.cfg.Queue, r, c.processNext)
}

func (c *Controller) processNext() error {
	if b, ok := c.cfg.Queue.(batchQueue); ok && c.cfg.ProcessBatch != nil {
		return b.PopBatch(c.cfg.ProcessBatch, c.cfg.Process)
	}
	_, err := c.cfg.Queue.Pop(c.cfg.Process)
	return err
}

// HasSynced is the queue's: the first list has been popped.
func (c *Controller) HasSynced() bool { return c.cfg.Queue.HasSynced() }

// HasSyncedChecker is HasSynced as a DoneChecker, named as the queue is:
// "RealFIFO <object type>" or "DeltaFIFO <object type>" in a plain
// informer, the informer's name if it has one (P20). A queue without a
// Name method is named after its Go type.
func (c *Controller) HasSyncedChecker() DoneChecker {
	name := fmt.Sprintf("%T", c.cfg.Queue)
	if n, ok := c.cfg.Queue.(interface{ Name() string }); ok {
		name = n.Name()
	}
	return checker{name: name, done: c.cfg.Queue.Done()}
}

// LastSyncResourceVersion is the reflector's, "" before Run.
func (c *Controller) LastSyncResourceVersion() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reflector == nil {
		return ""
	}
	return c.reflector.LastSyncResourceVersion()
}

// InformerOptions configure a plain informer (client-go: InformerOptions).
type InformerOptions struct {
	// ListerWatcher is where the data comes from.
	ListerWatcher reflector.ListerWatcher
	// ObjectType is the type every watched object must have.
	ObjectType runtime.Object
	// Handler hears every change, on the processing goroutine.
	Handler ResourceEventHandler
	// ResyncPeriod, if set, resyncs the store this often: Handler gets
	// OnUpdate(obj, obj) for every cached object.
	ResyncPeriod time.Duration
	// MinWatchTimeout raises the shortest watch timeout (default 5 min).
	MinWatchTimeout time.Duration
	// Indexers, if set, index the store.
	Indexers store.Indexers
	// Transform, if set, rewrites every object before it is queued.
	Transform store.TransformFunc
	// Stack picks the queue and the list strategy, as for a shared
	// informer; Default if empty.
	Stack Stack
	// Clock, RelistClock, Rand, Trace and ReflectorTrace are as in
	// Options.
	Clock          clock.Clock
	RelistClock    clock.Clock
	Rand           *rand.Rand
	Trace          func(Event)
	ReflectorTrace func(reflector.Event)
	// Identifier and MetricsProvider are as in Options (P20).
	Identifier      metrics.InformerNameAndResource
	MetricsProvider metrics.Provider
	// Logger is where the queue reports lookup errors; klog.Background()
	// if nil.
	Logger *klog.Logger
}

// NewInformerWithOptions returns a store and the Controller that keeps it
// in step with the ListerWatcher while it tells Handler about every change
// (client-go: NewInformerWithOptions). Read the store (Get, List, the
// indices); writing to it would make the notifications wrong.
func NewInformerWithOptions(o InformerOptions) (store.Indexer, *Controller) {
	if o.Stack == "" {
		o.Stack = Default
	}
	clientState := store.New(store.Options{
		KeyFunc:         store.DeletionHandlingMetaNamespaceKeyFunc,
		Indexers:        o.Indexers,
		Identifier:      o.Identifier,
		MetricsProvider: o.MetricsProvider,
	})
	h := o.Handler
	proc := &processing{store: clientState, traceFn: o.Trace, deliver: func(n Notification, _ bool) {
		switch n.Kind {
		case KindAdd:
			h.OnAdd(n.New, n.InInitialList)
		case KindUpdate:
			h.OnUpdate(n.Old, n.New)
		case KindDelete:
			h.OnDelete(n.Old)
		}
	}}
	cfg := &Config{
		Queue: o.Stack.newQueue(clientState, o.Transform, queueOptions{
			objectType: o.ObjectType, id: o.Identifier, provider: o.MetricsProvider, clock: o.Clock, logger: o.Logger,
		}).(Queue), // DeltaFIFO or RealFIFO
		ListerWatcher:    o.ListerWatcher,
		ObjectType:       o.ObjectType,
		FullResyncPeriod: o.ResyncPeriod,
		MinWatchTimeout:  o.MinWatchTimeout,
		UseWatchList:     o.Stack.usesWatchList(),
		Clock:            o.Clock,
		RelistClock:      o.RelistClock,
		Rand:             o.Rand,
		ReflectorTrace:   o.ReflectorTrace,
		Process: func(obj any, inInitialList bool) error {
			deltas, ok := obj.(deltafifo.Deltas)
			if !ok {
				return errors.New("object given as Process argument is not Deltas")
			}
			return proc.processDeltas(deltas, inInitialList)
		},
	}
	if o.Stack.popsBatches() {
		cfg.ProcessBatch = proc.processBatch
	}
	return clientState, NewController(cfg)
}

// NewInformer is NewInformerWithOptions with a ListerWatcher, a type, a
// resync period and a handler, in the default stack.
func NewInformer(lw reflector.ListerWatcher, objType runtime.Object, resyncPeriod time.Duration, h ResourceEventHandler) (store.Store, *Controller) {
	return NewInformerWithOptions(InformerOptions{ListerWatcher: lw, ObjectType: objType, ResyncPeriod: resyncPeriod, Handler: h})
}

// NewIndexerInformer is NewInformer with indices.
func NewIndexerInformer(lw reflector.ListerWatcher, objType runtime.Object, resyncPeriod time.Duration, h ResourceEventHandler, indexers store.Indexers) (store.Indexer, *Controller) {
	return NewInformerWithOptions(InformerOptions{ListerWatcher: lw, ObjectType: objType, ResyncPeriod: resyncPeriod, Handler: h, Indexers: indexers})
}
