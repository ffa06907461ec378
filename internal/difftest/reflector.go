package difftest

import (
	"context"
	"fmt"
	"k8s.io/klog/v2"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/reflector"
	"github.com/cachelab/cachelab/store"
)

// ReflectorConfig sets up both reflectors of a ReflectorWorld the same way.
type ReflectorConfig struct {
	Name          string        // both reflectors' name (ReflectorOptions.Name), which a panic may carry
	WatchList     bool          // client-go's WatchListClient gate; cachelab's UseWatchList
	NoWatchListLW bool          // the servers decline watch-list (F1)
	Bookmarks     bool          // the store takes bookmarks (ReflectorBookmarkStore)
	Transform     bool          // the store transforms with Transform (TransformingStore)
	ResyncPeriod  time.Duration // F7
	PageSize      int64         // WatchListPageSize
	// ShouldResync answers both reflectors' ShouldResync if set; it is
	// called with the side ("cachelab" or "client-go").
	ShouldResync                  func(side string) bool
	MaxInternalErrorRetryDuration time.Duration
	FailResync                    bool // Resync returns an error
}

// ReflectorWorld runs cachelab's and client-go's Reflector over two
// scripted servers, each writing into a recording store, and compares
// per Settle: requests, the store calls, and LastSyncResourceVersion.
type ReflectorWorld struct {
	*World
	CLR   *reflector.Reflector
	CGR   *cache.Reflector
	CLLog *Log
	CGLog *Log
	// reports hears, per side, what the reflector reported through
	// utilruntime.HandleError* and panics (see Quiet, crashLogger).
	reports [2]*Log
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

// NewReflectorWorld builds both reflectors; Start runs them. Call it
// inside a synctest bubble.
func NewReflectorWorld(t *testing.T, cfg ReflectorConfig) *ReflectorWorld {
	clientfeaturestesting.SetFeatureDuringTest(t, features.WatchListClient, cfg.WatchList)
	w := &ReflectorWorld{World: newWorld(t), CLLog: &Log{}, CGLog: &Log{}, reports: [2]*Log{{}, {}}}
	w.CL.NoWatchList, w.CG.NoWatchList = cfg.NoWatchListLW, cfg.NoWatchListLW
	rec := func(l *Log) *recStore { return &recStore{log: l, transform: cfg.Transform, failResync: cfg.FailResync} }
	var clStore reflector.Store = rec(w.CLLog)
	var cgStore cache.ReflectorStore = cgRecStore{rec(w.CGLog)}
	if cfg.Bookmarks {
		clStore = clBookmarkStore{rec(w.CLLog)}
		cgStore = cgBookmarkStore{cgRecStore{rec(w.CGLog)}}
	}
	opts := reflector.Options{
		Name:                          cfg.Name,
		ExpectedType:                  &unstructured.Unstructured{},
		ResyncPeriod:                  cfg.ResyncPeriod,
		WatchListPageSize:             cfg.PageSize,
		UseWatchList:                  cfg.WatchList,
		MaxInternalErrorRetryDuration: cfg.MaxInternalErrorRetryDuration,
	}
	if cfg.ShouldResync != nil {
		opts.ShouldResync = func() bool { return cfg.ShouldResync("cachelab") }
	}
	w.CLR = reflector.New(w.CL, clStore, opts)
	w.CGR = cache.NewReflectorWithOptions(w.CG, &unstructured.Unstructured{}, cgStore, cache.ReflectorOptions{Name: cfg.Name, ResyncPeriod: cfg.ResyncPeriod})
	w.CGR.WatchListPageSize = cfg.PageSize
	w.CGR.MaxInternalErrorRetryDuration = cfg.MaxInternalErrorRetryDuration
	if cfg.ShouldResync != nil {
		w.CGR.ShouldResync = func() bool { return cfg.ShouldResync("client-go") }
	}
	w.compare = append(w.compare, w.compareStores, w.compareReports)
	return w
}

// Start runs both reflectors.
func (w *ReflectorWorld) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	clCtx := klog.NewContext(ctx, crashLogger(w.reports[0], "reflector"))
	cgCtx := klog.NewContext(ctx, crashLogger(w.reports[1], "reflector"))
	w.wg.Go(func() { w.CLR.Run(clCtx) })
	w.wg.Go(func() { w.CGR.RunWithContext(cgCtx) })
	w.Note("start")
	w.Settle()
}

// Stop stops both and waits for them.
func (w *ReflectorWorld) Stop() {
	w.cancel()
	w.wg.Wait()
}

// compareReports compares what each reflector reported outside its
// return values: errors handed to utilruntime, and panics.
func (w *ReflectorWorld) compareReports() {
	w.T.Helper()
	cl, cg := w.reports[0].Take(), w.reports[1].Take()
	for _, l := range cl {
		w.Note("reported: " + l)
	}
	w.Compare("reported errors", cl, cg)
}

func (w *ReflectorWorld) compareStores() {
	w.T.Helper()
	cl, cg := w.CLLog.Take(), w.CGLog.Take()
	for _, l := range cl {
		w.Note("store: " + l)
	}
	w.Compare("store calls", cl, cg)
	rv := w.CLR.LastSyncResourceVersion()
	w.Note("last synced RV: " + rv)
	w.Compare("LastSyncResourceVersion", rv, w.CGR.LastSyncResourceVersion())
}

// recStore records the calls a reflector makes on its store.
type recStore struct {
	log        *Log
	transform  bool
	failResync bool
}

func (s *recStore) Add(obj any) error    { s.log.Add("Add %s", Describe(obj)); return refuse(obj) }
func (s *recStore) Update(obj any) error { s.log.Add("Update %s", Describe(obj)); return refuse(obj) }
func (s *recStore) Delete(obj any) error { s.log.Add("Delete %s", Describe(obj)); return refuse(obj) }

// refuse fails a write of an object labelled LabelStoreFails.
func refuse(obj any) error {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		if _, fail := u.GetLabels()[LabelStoreFails]; fail {
			return fmt.Errorf("store refused %s", Describe(obj))
		}
	}
	return nil
}
func (s *recStore) Replace(list []any, rv string) error {
	s.log.Add("Replace %s rv=%s", DescribeSorted(list), rv)
	return nil
}
func (s *recStore) Resync() error {
	s.log.Add("Resync")
	if s.failResync {
		return errResync
	}
	return nil
}

var errResync = &resyncError{}

type resyncError struct{}

func (*resyncError) Error() string { return "resync failed" }

func (s *recStore) transformer() func(any) (any, error) {
	if !s.transform {
		return nil
	}
	return Transform
}

// Transformer makes cachelab's store a TransformingStore.
func (s *recStore) Transformer() store.TransformFunc { return s.transformer() }

type clBookmarkStore struct{ *recStore }

func (s clBookmarkStore) Bookmark(rv string) error { s.log.Add("Bookmark %s", rv); return nil }

type cgRecStore struct{ *recStore }

func (s cgRecStore) Transformer() cache.TransformFunc { return s.transformer() }

type cgBookmarkStore struct{ cgRecStore }

func (s cgBookmarkStore) Bookmark(rv string) error { s.log.Add("Bookmark %s", rv); return nil }
