package informer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime/pprof"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/cachelab/cachelab/metrics"
	"github.com/cachelab/cachelab/reflector"
	"github.com/cachelab/cachelab/store"
)

// Options configure a SharedIndexInformer. The zero value is the default
// stack on the real clock, without resync or extra indices.
type Options struct {
	// Stack picks the queue and the list strategy; Default if empty.
	Stack Stack
	// ExampleObject is the type every watched object must have (a
	// *unstructured.Unstructured with its kind set, for cachelab's etcd
	// ListerWatcher); nil accepts anything.
	ExampleObject runtime.Object
	// ObjectDescription names the type in errors; derived if empty.
	ObjectDescription string
	// ResyncPeriod is the default handler resync period and the resync
	// check period; 0 means no resync (P7).
	ResyncPeriod time.Duration
	// Indexers are the indexer's initial indices; more can be added with
	// AddIndexers.
	Indexers store.Indexers
	// WatchListPageSize is the LIST page size (0: the reflector's default).
	WatchListPageSize int64
	// MinWatchTimeout raises the shortest watch timeout (default 5 min).
	MinWatchTimeout time.Duration
	// Clock drives resync periods, backoff and watch durations; the real
	// clock if nil.
	Clock clock.Clock
	// RelistClock, if set, is the clock the reflector's relist backoff
	// waits on (see reflector.Options.RelistClock).
	RelistClock clock.Clock
	// Rand draws backoff jitter and watch timeouts; random if nil.
	Rand *rand.Rand
	// Trace, if set, hears every processing step (see Event);
	// ReflectorTrace every reflector step.
	Trace          func(Event)
	ReflectorTrace func(reflector.Event)
	// DetectMutations turns the cache mutation detector on, as
	// KUBE_CACHE_MUTATION_DETECTOR=true does (see mutation.go); OnMutation,
	// if set, hears its message instead of the panic.
	DetectMutations bool
	OnMutation      func(message string)
	// MutationReport is where the detector prints what it found (the
	// object as cached next to its copy); os.Stdout, as client-go, if nil.
	// It and OnMutation are cachelab's: client-go's detector always
	// prints to stdout and panics.
	MutationReport io.Writer
	// Identifier names the informer for its metrics; with a reserved one
	// (see package metrics) the queue and the indexer publish to
	// MetricsProvider, or to the process's provider if that is nil
	// (P20). client-go: SharedIndexInformerOptions.Identifier and
	// InformerMetricsProvider.
	Identifier      metrics.InformerNameAndResource
	MetricsProvider metrics.Provider
	// Labels, key and value pairs, are pprof labels Run puts on its own
	// goroutine before it starts any other, so that every goroutine of
	// the informer carries them: a program that runs several informers
	// from one goroutine (a factory's Start) can tell theirs apart in a
	// profile or a goroutine dump. cachelab's: client-go's informer runs
	// with the labels of whatever goroutine runs it.
	Labels []string
}

// Registration is what AddEventHandler returns: the handle for
// RemoveEventHandler, and the handler's own sync state (P9).
type Registration interface {
	// HasSynced reports whether the informer has synced and this handler
	// has returned from every OnAdd of the initial list.
	HasSynced() bool
	// Synced is closed when HasSynced turns true.
	Synced() <-chan struct{}
	// Finished is closed once the handler will not be called again.
	Finished() <-chan struct{}
	// HasSyncedChecker is HasSynced as a DoneChecker, for WaitFor.
	HasSyncedChecker() DoneChecker
}

// SharedIndexInformer keeps an indexed cache of one resource in step with
// the server and tells any number of handlers about every change. It
// mirrors client-go's sharedIndexInformer (shared_informer.go) and the
// controller it runs (controller.go).
//
// Contract, as client-go's: the indexer holds, after HasSynced, the state
// of the resource at some resourceVersion, and converges to the server's;
// every handler hears each change in order, and a handler's view rebuilt
// from its calls equals the indexer once it has caught up. Handlers must
// not modify objects they get.
type SharedIndexInformer struct {
	lw      reflector.ListerWatcher
	opts    Options
	stack   Stack
	clock   clock.Clock
	indexer *store.Cache

	processor *processor
	synced    chan struct{} // closed when the queue delivered the initial list

	// mu guards the lifecycle and what may change only before start.
	mu                sync.Mutex
	started, stopped  bool
	transform         store.TransformFunc
	watchErrorHandler reflector.WatchErrorHandler
	resyncCheckPeriod time.Duration
	defaultResync     time.Duration
	reflector         *reflector.Reflector
	queue             queue

	// blockDeltas keeps processing out while a late handler is given the
	// cache's content, so it misses nothing and sees nothing twice (P8).
	blockDeltas sync.Mutex
	proc        processing // what processing does with each popped item
	detector    *mutationDetector
}

// New returns an informer over lw; Run starts it.
func New(lw reflector.ListerWatcher, opts Options) *SharedIndexInformer {
	if opts.Stack == "" {
		opts.Stack = Default
	}
	clk := opts.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	s := &SharedIndexInformer{
		lw:    lw,
		opts:  opts,
		stack: opts.Stack,
		clock: clk,
		indexer: store.New(store.Options{
			KeyFunc:         store.DeletionHandlingMetaNamespaceKeyFunc,
			Indexers:        opts.Indexers,
			Identifier:      opts.Identifier,
			MetricsProvider: opts.MetricsProvider,
		}),
		processor:         newProcessor(clk),
		synced:            make(chan struct{}),
		resyncCheckPeriod: opts.ResyncPeriod,
		defaultResync:     opts.ResyncPeriod,
	}
	s.detector = newMutationDetector(fmt.Sprintf("%T", opts.ExampleObject), opts.DetectMutations, opts.OnMutation, opts.MutationReport)
	s.proc = processing{store: s.indexer, traceFn: opts.Trace, deliver: func(n Notification, sync bool) {
		if n.Kind != KindDelete {
			s.detector.add(n.New) // what the handlers are about to share
		}
		if skipped := s.processor.distribute(n, sync); len(skipped) > 0 {
			s.trace(Event{Step: StepSkip, Notification: n, Skipped: skipped})
		}
	}}
	return s
}

// errStarted is returned by settings that are fixed at start (P13).
var errStarted = errors.New("informer has already started")

// SetTransform sets the function every object goes through before it is
// queued and cached (e.g. to drop managedFields). Only before Run (P13).
func (s *SharedIndexInformer) SetTransform(f store.TransformFunc) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return errStarted
	}
	s.transform = f
	return nil
}

// SetWatchErrorHandler sets who hears a failed list or watch. Only before
// Run (P13).
func (s *SharedIndexInformer) SetWatchErrorHandler(h reflector.WatchErrorHandler) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return errStarted
	}
	s.watchErrorHandler = h
	return nil
}

// AddIndexers adds indices, re-indexing what is cached; also after start,
// but not after stop (P13).
func (s *SharedIndexInformer) AddIndexers(indexers store.Indexers) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return fmt.Errorf("indexer was not added because it has stopped already")
	}
	return s.indexer.AddIndexers(indexers)
}

// GetStore returns the cache. Read it; never write it.
func (s *SharedIndexInformer) GetStore() store.Store { return s.indexer }

// GetIndexer returns the cache with its indices. Read it; never write it.
func (s *SharedIndexInformer) GetIndexer() store.Indexer { return s.indexer }

// Stack is the stack the informer runs.
func (s *SharedIndexInformer) Stack() Stack { return s.stack }

// HasSynced reports whether the initial list has been delivered to the
// cache (and queued for every handler; see Registration.HasSynced for
// "and handled").
func (s *SharedIndexInformer) HasSynced() bool {
	select {
	case <-s.synced:
		return true
	default:
		return false
	}
}

// Synced is closed when HasSynced turns true.
func (s *SharedIndexInformer) Synced() <-chan struct{} { return s.synced }

// LastSyncResourceVersion is the reflector's last synced resourceVersion;
// "" before Run.
func (s *SharedIndexInformer) LastSyncResourceVersion() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reflector == nil {
		return ""
	}
	return s.reflector.LastSyncResourceVersion()
}

// HasStarted reports whether Run has begun: it is true from the moment
// Run builds the queue and the reflector, and stays true after Run
// returns (P24).
func (s *SharedIndexInformer) HasStarted() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.started
}

// IsStopped reports whether Run has returned.
func (s *SharedIndexInformer) IsStopped() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopped
}

// AddEventHandler registers h with the informer's default resync period.
func (s *SharedIndexInformer) AddEventHandler(h ResourceEventHandler) (Registration, error) {
	return s.AddEventHandlerWithOptions(h, HandlerOptions{})
}

// AddEventHandlerWithResyncPeriod registers h with its own resync period.
func (s *SharedIndexInformer) AddEventHandlerWithResyncPeriod(h ResourceEventHandler, period time.Duration) (Registration, error) {
	return s.AddEventHandlerWithOptions(h, HandlerOptions{ResyncPeriod: &period})
}

// HandlerOptions configure one handler.
type HandlerOptions struct {
	// ResyncPeriod overrides the informer's default resync period.
	ResyncPeriod *time.Duration
	// Name names the handler in traces; its type if empty.
	Name string
	// Logger is where a panic of the handler is logged (P14);
	// klog.Background() if nil.
	Logger *klog.Logger
}

// minimumResyncPeriod is the floor of a non-zero handler resync period.
const minimumResyncPeriod = time.Second

// AddEventHandlerWithOptions registers h. Before Run, h will hear the
// initial list; after, it first hears an OnAdd(obj, true) for everything
// cached (P8). A resync period is fitted to the informer's (P7).
func (s *SharedIndexInformer) AddEventHandlerWithOptions(h ResourceEventHandler, o HandlerOptions) (Registration, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return nil, fmt.Errorf("handler %v was not added to shared informer because it has stopped already", h)
	}
	logger := klog.Background()
	if o.Logger != nil {
		logger = *o.Logger
	}
	requested := s.defaultResync
	if o.ResyncPeriod != nil {
		requested = *o.ResyncPeriod
	}
	requested = s.fitResyncPeriodLocked(logger, requested)
	name := o.Name
	if name == "" {
		name = fmt.Sprintf("%T", h)
	}
	l := newListener(h, name, logger, requested, effectiveResyncPeriod(logger, requested, s.resyncCheckPeriod), s.clock.Now(), s.synced, s.opts.Trace)
	l.checkerName = fmt.Sprintf("%s + event handler %s", s.checkerName(), handlerName(h))
	if !s.started {
		s.processor.add(l)
		return l, nil
	}
	s.blockDeltas.Lock()
	defer s.blockDeltas.Unlock()
	started := s.processor.add(l)
	for _, obj := range s.indexer.List() {
		l.add(Notification{Kind: KindAdd, New: obj, InInitialList: true})
	}
	// Only now may the listener learn that the informer has synced: its
	// initial adds are all counted (client-go: watchSynced after the loop).
	if started {
		s.processor.watchUpstream(l)
	}
	return l, nil
}

// ResyncCheckPeriod is how often the reflector resyncs (0: never): the
// informer's default period, lowered by handlers added before Run that
// asked for a shorter one (P7).
func (s *SharedIndexInformer) ResyncCheckPeriod() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.resyncCheckPeriod
}

// fitResyncPeriodLocked applies P7 to a requested period: at least 1 s;
// before start, a period below the check period lowers the check period
// (and every listener is re-derived); after start, it is raised to it.
// Each change is logged through the new handler's logger, in client-go's
// words (P7).
func (s *SharedIndexInformer) fitResyncPeriodLocked(logger klog.Logger, period time.Duration) time.Duration {
	if period <= 0 {
		return period
	}
	if period < minimumResyncPeriod {
		logger.Info("Warning: resync period is too small. Changing it to the minimum allowed value", "resyncPeriod", period, "minimumResyncPeriod", minimumResyncPeriod)
		period = minimumResyncPeriod
	}
	if period < s.resyncCheckPeriod {
		if s.started {
			logger.Info("Warning: resync period is smaller than resync check period and the informer has already started. Changing it to the resync check period", "resyncPeriod", period, "resyncCheckPeriod", s.resyncCheckPeriod)
			return s.resyncCheckPeriod
		}
		s.resyncCheckPeriod = period
		s.processor.resyncCheckPeriodChanged(logger, period)
	}
	return period
}

// RemoveEventHandler unregisters a handler; what it had not been delivered
// is dropped (P10). Removing it twice is no error.
func (s *SharedIndexInformer) RemoveEventHandler(r Registration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.blockDeltas.Lock()
	defer s.blockDeltas.Unlock()
	l, ok := r.(*listener)
	if !ok {
		return fmt.Errorf("%w: %T", errNotRegistration, r)
	}
	s.processor.remove(l)
	return nil
}

// ShutDownEventHandler removes the handler (RemoveEventHandler, which
// returns at once) and then waits until the handler will not be called
// again: until the call in progress, if any, has returned. Like
// RemoveEventHandler it may be called more than once; it must not be
// called from the handler's own callbacks, which it would wait for.
// (client-go: ShutDownEventHandler, v0.36.)
func ShutDownEventHandler(s *SharedIndexInformer, r Registration) error {
	if err := s.RemoveEventHandler(r); err != nil {
		return err
	}
	<-r.Finished()
	return nil
}

func (s *SharedIndexInformer) trace(e Event) {
	if s.opts.Trace != nil {
		s.opts.Trace(e)
	}
}

// Run runs the informer until ctx ends: the reflector fills the queue, the
// processing loop empties it into the indexer and the handlers. It returns
// once everything it started has stopped. A second Run logs a warning
// (at Info, through ctx's logger) and returns at once (P23).
func (s *SharedIndexInformer) Run(ctx context.Context) {
	if len(s.opts.Labels) > 0 {
		pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), pprof.Labels(s.opts.Labels...)))
	}
	defer utilruntime.HandleCrashWithContext(ctx)
	logger := klog.FromContext(ctx)
	q, ok := s.start(logger)
	if !ok {
		logger.Info("Warning: the sharedIndexInformer has started, run more than once is not allowed") // P23
		return
	}
	s.processor.run()
	// What follows the controller is deferred, as in client-go, so that a
	// processing panic that leaves it (ReallyCrash true) still stops the
	// processor and waits for what Run started (including the wait for
	// sync, which ends only with ctx if the informer never synced) before
	// it goes on to Run's caller.
	var wg sync.WaitGroup
	defer wg.Wait()
	detectorStop := make(chan struct{})
	defer func() {
		s.processor.stop()
		close(detectorStop) // after processing has stopped, as in client-go
	}()
	// Not wg.Go, which recovers and re-raises a panic: the detector's
	// panic must end the process as client-go's does, untouched.
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.detector.run(detectorStop)
	}()
	wg.Go(func() {
		select {
		case <-ctx.Done():
		case <-q.Done():
			close(s.synced)
		}
	})
	defer func() {
		s.mu.Lock()
		s.stopped = true
		s.mu.Unlock()
	}()
	s.runController(ctx, q)
}

// start builds the queue and the reflector; false if already started.
func (s *SharedIndexInformer) start(logger klog.Logger) (queue, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return nil, false
	}
	q := s.stack.newQueue(s.indexer, s.transform, queueOptions{
		objectType: s.opts.ExampleObject, id: s.opts.Identifier, provider: s.opts.MetricsProvider, clock: s.clock, logger: &logger,
	})
	s.reflector = reflector.New(s.lw, q, reflector.Options{
		ExpectedType:      s.opts.ExampleObject,
		TypeDescription:   s.opts.ObjectDescription,
		ResyncPeriod:      s.resyncCheckPeriod,
		ShouldResync:      s.processor.shouldResync,
		MinWatchTimeout:   s.opts.MinWatchTimeout,
		WatchListPageSize: s.opts.WatchListPageSize,
		UseWatchList:      s.stack.usesWatchList(),
		WatchErrorHandler: s.watchErrorHandler,
		Clock:             s.clock,
		RelistClock:       s.opts.RelistClock,
		Rand:              s.opts.Rand,
		Trace:             s.opts.ReflectorTrace,
	})
	s.queue = q
	s.started = true
	return q, true
}

// Backlog is the work an informer has accepted and not finished.
type Backlog struct {
	// Queued is how many items wait in the queue or are being
	// processed; 0 means processing is idle.
	Queued int
	// Handlers maps each handler's name (HandlerOptions.Name, or its
	// type) to the notifications it has not yet returned from: buffered,
	// plus the one it is handling.
	Handlers map[string]int
	// Buffered is Handlers without the one in progress: what a
	// RemoveEventHandler now would drop (P10).
	Buffered map[string]int
	// SyncPending counts sync bookkeeping not yet done: the queue has
	// delivered the initial list but HasSynced has not turned true yet, or
	// a registration has not yet heard that the informer synced. (Both
	// happen on goroutines of their own, a moment later.)
	SyncPending int
}

// Backlog reports the work in flight. A simulator uses it to know when a
// step's effects have been fully processed; a learner, to see where the
// work is piling up.
func (s *SharedIndexInformer) Backlog() Backlog {
	s.mu.Lock()
	q := s.queue
	s.mu.Unlock()
	var b Backlog
	if q != nil {
		b.Queued = q.Unfinished()
		if isClosed(q.Done()) && !s.HasSynced() {
			b.SyncPending++
		}
	}
	b.Handlers, b.Buffered, b.SyncPending = s.processor.backlog(b.SyncPending)
	return b
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
