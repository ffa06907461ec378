package reflector

import (
	"context"
	"math/rand/v2"
	"reflect"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"

	"github.com/cachelab/cachelab/store"
)

// Store is what a Reflector writes into: a queue (the informer's case) or
// a plain store. It mirrors client-go's ReflectorStore.
type Store interface {
	Add(obj any) error
	Update(obj any) error
	Delete(obj any) error
	Replace(list []any, resourceVersion string) error
	Resync() error
}

// BookmarkStore is a Store that wants watch bookmarks (RealFIFO in atomic
// mode). Stores without it never hear of bookmarks (F3).
type BookmarkStore interface {
	Bookmark(resourceVersion string) error
}

// TransformingStore is a Store that transforms what it is given. In
// watch-list mode the reflector transforms the initial events with the same
// function while it collects them, as client-go does (so each object is
// transformed twice: D8).
type TransformingStore interface {
	Store
	Transformer() store.TransformFunc
}

// ResourceVersionUpdater is a Store that wants to hear the resourceVersion
// of every watch event the reflector processed.
type ResourceVersionUpdater interface {
	UpdateResourceVersion(resourceVersion string)
}

// WatchListUnsupported is the opt-out a ListerWatcher declares when it
// cannot stream initial events; such a reflector uses LIST then WATCH (F1).
type WatchListUnsupported interface {
	IsWatchListSemanticsUnSupported() bool
}

// WatchErrorHandler is called when ListAndWatch ends with an error, before
// the reflector backs off and relists (F4).
type WatchErrorHandler func(ctx context.Context, r *Reflector, err error)

// Options configure a Reflector. The zero value is a LIST+WATCH reflector on
// the real clock without resync.
type Options struct {
	// Name names the reflector in errors and traces.
	Name string
	// ExpectedType, if set, is the type every watched object must have;
	// other objects are dropped with an error (F3). An Unstructured with a
	// kind also fixes the group/version/kind.
	ExpectedType runtime.Object
	// TypeDescription names the type in errors; derived from ExpectedType
	// when empty.
	TypeDescription string
	// ResyncPeriod is how often Store.Resync is called; 0 means never (F7).
	ResyncPeriod time.Duration
	// ShouldResync, if set, is asked before each resync.
	ShouldResync func() bool
	// MinWatchTimeout raises the lower bound of a watch's random timeout
	// (default 5 min; the upper bound is twice the lower).
	MinWatchTimeout time.Duration
	// WatchListPageSize, if non-zero, is the LIST page size (F1).
	WatchListPageSize int64
	// UseWatchList makes every list a watch-list stream first (the
	// WatchListClient gate of client-go's default stack). A ListerWatcher
	// that declares WatchListUnsupported turns it off.
	UseWatchList bool
	// MaxInternalErrorRetryDuration, if positive, re-watches after a 500
	// inside a watch for that long instead of relisting (F4).
	MaxInternalErrorRetryDuration time.Duration
	// WatchErrorHandler replaces DefaultWatchErrorHandler.
	WatchErrorHandler WatchErrorHandler
	// Clock drives resync timers, backoff waits and watch durations; the
	// real clock if nil.
	Clock clock.Clock
	// RelistClock, if set, is the clock the relist backoff waits on
	// instead of Clock. client-go always waits that one delay on the real
	// clock, even when given a fake one; a simulation that runs both side
	// by side on a fake clock passes clock.RealClock{} here to match.
	RelistClock clock.Clock
	// Rand draws backoff jitter and watch timeouts; a randomly seeded source
	// if nil. Pass a seeded one for a repeatable run.
	Rand *rand.Rand
	// Trace, if set, hears every step the reflector takes (see Event).
	Trace func(Event)
}

// Reflector keeps a Store in step with a resource: it lists (or streams the
// initial events), then watches, and relists when the watch cannot go on.
// It mirrors client-go's Reflector (reflector.go).
type Reflector struct {
	name            string
	typeDescription string
	expectedType    reflect.Type
	expectedGVK     *schema.GroupVersionKind
	lw              ListerWatcherWithContext
	store           Store
	opts            Options
	clock           clock.Clock
	relistClock     clock.Clock
	backoff         *Backoff
	rand            *lockedRand
	useWatchList    bool
	minWatchTimeout time.Duration

	// paginatedResult is set once an RV="0" LIST came back in pages:
	// later relists keep paging (F1). Only the Run goroutine touches it.
	paginatedResult bool

	mu            sync.RWMutex
	lastSyncRV    string // the resourceVersion the store is known to be at
	rvUnavailable bool   // the last LIST or watch-list said lastSyncRV is gone (F5)
}

// New returns a Reflector that keeps store in step with what lw serves.
func New(lw ListerWatcher, store Store, opts Options) *Reflector {
	clk := opts.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	rnd := opts.Rand
	if rnd == nil {
		rnd = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	}
	r := &Reflector{
		name:            opts.Name,
		lw:              ToListerWatcherWithContext(lw),
		store:           store,
		opts:            opts,
		clock:           clk,
		relistClock:     clk,
		rand:            &lockedRand{r: rnd},
		minWatchTimeout: max(opts.MinWatchTimeout, defaultMinWatchTimeout),
	}
	if opts.RelistClock != nil {
		r.relistClock = opts.RelistClock
	}
	r.backoff = NewBackoff(clk, r.rand.Float64)
	r.typeDescription, r.expectedType, r.expectedGVK = describeType(opts)
	if r.name == "" {
		r.name = "reflector " + r.typeDescription
	}
	// The opt-out is looked for on lw itself, before it is wrapped (F1).
	r.useWatchList = opts.UseWatchList && !declinesWatchList(lw)
	return r
}

// defaultMinWatchTimeout is the shortest timeout a watch asks for; each
// watch draws its timeout from [min, 2*min) so watches of many clients do
// not all end together.
const defaultMinWatchTimeout = 5 * time.Minute

func declinesWatchList(lw ListerWatcher) bool {
	u, ok := lw.(WatchListUnsupported)
	return ok && u.IsWatchListSemanticsUnSupported()
}

// describeType derives the type checks and the description used in errors,
// as client-go does: "*v1.Pod", or "/v1, Kind=Pod" for an Unstructured
// with a kind.
func describeType(opts Options) (string, reflect.Type, *schema.GroupVersionKind) {
	if opts.ExpectedType == nil {
		return firstNonEmpty(opts.TypeDescription, "<unspecified>"), nil, nil
	}
	desc := reflect.TypeOf(opts.ExpectedType).String()
	var gvk *schema.GroupVersionKind
	if u, ok := opts.ExpectedType.(*unstructured.Unstructured); ok && !u.GroupVersionKind().Empty() {
		g := u.GroupVersionKind()
		gvk, desc = &g, g.String()
	}
	return firstNonEmpty(opts.TypeDescription, desc), reflect.TypeOf(opts.ExpectedType), gvk
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Name is the reflector's name.
func (r *Reflector) Name() string { return r.name }

// TypeDescription names the type the reflector lists and watches.
func (r *Reflector) TypeDescription() string { return r.typeDescription }

// UsesWatchList reports whether lists are tried as watch-list streams.
func (r *Reflector) UsesWatchList() bool { return r.useWatchList }

// LastSyncResourceVersion is the resourceVersion the store was last brought
// to: by a LIST, a watch-list, or a processed watch event (F3).
func (r *Reflector) LastSyncResourceVersion() string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.lastSyncRV
}

func (r *Reflector) setLastSyncRV(rv string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lastSyncRV = rv
}

func (r *Reflector) setRVUnavailable(unavailable bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rvUnavailable = unavailable
}

// relistRV is the resourceVersion a LIST asks for: "0" (any, served from
// the apiserver's cache) the first time, the last synced one later, and ""
// (a fresh, quorum read) once that was found unavailable (F1, F5).
func (r *Reflector) relistRV() string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	switch {
	case r.rvUnavailable:
		return ""
	case r.lastSyncRV == "":
		return "0"
	}
	return r.lastSyncRV
}

// rewatchRV is the resourceVersion a watch-list asks for: like relistRV,
// but "" rather than "0" the first time.
func (r *Reflector) rewatchRV() string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.rvUnavailable {
		return ""
	}
	return r.lastSyncRV
}

// watchTimeout draws a watch's TimeoutSeconds from [min, 2*min).
func (r *Reflector) watchTimeout() *int64 {
	minS := r.minWatchTimeout.Seconds()
	s := int64(minS + r.rand.Float64()*minS)
	return &s
}

// Run lists and watches until ctx ends. After every ListAndWatch that
// returns, for whatever reason, it waits a backoff delay and starts again
// (F4, F6); an error first goes to the WatchErrorHandler.
//
// A panic in a ListAndWatch (in the ListerWatcher, in a LIST, in the
// store while a watch event is handled) is handled as client-go's
// wait.DelayFunc.Until handles it (F8): utilruntime.HandleCrashWithContext
// logs it through ctx's logger and runs utilruntime.PanicHandlers, and
// unless utilruntime.ReallyCrash is false the process crashes. If it is
// false, the WatchErrorHandler does not hear of it, and the reflector
// lists again after the backoff, as after an error.
func (r *Reflector) Run(ctx context.Context) {
	for {
		r.listAndWatchOnce(ctx)
		if !r.wait(ctx, StepRelistBackoff) {
			return
		}
	}
}

func (r *Reflector) listAndWatchOnce(ctx context.Context) {
	defer utilruntime.HandleCrashWithContext(ctx)
	if err := r.ListAndWatch(ctx); err != nil {
		r.handleWatchError(ctx, err)
	}
}

func (r *Reflector) handleWatchError(ctx context.Context, err error) {
	r.trace(Event{Step: StepWatchErrorHandler, Err: err})
	if r.opts.WatchErrorHandler != nil {
		r.opts.WatchErrorHandler(ctx, r, err)
		return
	}
	DefaultWatchErrorHandler(ctx, r, err)
}

// wait waits the next backoff delay; false if ctx ended first. A relist
// waits on RelistClock (Clock unless set), a re-watch on Clock. (client-go
// waits relist delays on the real clock even when given a fake one;
// cachelab uses the clock it was given unless told otherwise, so a
// simulation can step through backoff.)
func (r *Reflector) wait(ctx context.Context, step Step) bool {
	if ctx.Err() != nil {
		return false
	}
	d := r.backoff.Next()
	r.trace(Event{Step: step, Delay: d})
	clk := r.clock
	if step == StepRelistBackoff {
		clk = r.relistClock
	}
	select {
	case <-ctx.Done():
		return false
	case <-clk.After(d):
		return true
	}
}

// ListAndWatch brings the store up to date (watch-list, or LIST) and then
// watches until the watch can no longer go on. It returns nil when a relist
// is due for a reason the WatchErrorHandler need not hear (F4), and an
// error when listing or opening a watch failed.
func (r *Reflector) ListAndWatch(ctx context.Context) error {
	var w watch.Interface
	// However this round ends (an error, the context, a panic), the
	// watch it was handed is stopped (client-go stops it here and in the
	// watch loop; stopping twice is harmless).
	defer func() {
		if w != nil {
			w.Stop()
		}
	}()
	if r.useWatchList {
		var err error
		w, err = r.WatchList(ctx)
		if w == nil && err == nil {
			return nil // ctx ended
		}
		if err != nil {
			// Fall back to LIST for this cycle only (F1).
			r.trace(Event{Step: StepWatchListFallback, Err: err})
			w = nil
		}
	}
	if w == nil {
		if err := r.List(ctx); err != nil {
			return err
		}
	}
	return r.watchWithResync(ctx, w)
}

// watchWithResync runs the resync timer (F7) beside the watch loop; the
// timer starts anew with every ListAndWatch, so a relist restarts it.
func (r *Reflector) watchWithResync(ctx context.Context, w watch.Interface) error {
	resyncErr := make(chan error, 1)
	resyncCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { r.resyncLoop(resyncCtx, resyncErr) })
	defer wg.Wait()
	defer cancel()
	return r.Watch(ctx, w, resyncErr)
}

func (r *Reflector) trace(e Event) {
	if r.opts.Trace != nil {
		r.opts.Trace(e)
	}
}

// lockedRand shares one *rand.Rand between the goroutines that draw from it.
type lockedRand struct {
	mu sync.Mutex
	r  *rand.Rand
}

func (l *lockedRand) Float64() float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Float64()
}
