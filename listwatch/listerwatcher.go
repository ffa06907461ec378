package listwatch

import (
	"context"

	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"
)

// Options configures a ListerWatcher.
type Options struct {
	// Namespace limits the ListerWatcher to one namespace; "" means all.
	Namespace string
	// NoWatchList makes the ListerWatcher report that it does not support
	// watch-list streaming, so client-go's reflector uses LIST then WATCH.
	NoWatchList bool
	// WatchListOff plays a kube-apiserver whose WatchList feature gate is
	// off: a WATCH asking for initial events is refused with 422 (E11).
	// Unlike NoWatchList, the client does not know beforehand: it asks,
	// is refused, and falls back. SetWatchListFeature changes it later.
	WatchListOff bool
	// Clock measures a watch's TimeoutSeconds, as kube-apiserver's timer
	// does; the real clock if nil. A simulation gives its fake clock, so
	// that a watch ends when scenario time passes its timeout and never
	// because a person paused for minutes of wall-clock time.
	Clock clock.Clock
}

// ListerWatcher lists and watches one resource in etcd with
// kube-apiserver's semantics (E3-E9). It has the method sets of
// client-go's cache.ListerWatcher and cache.ListerWatcherWithContext, so
// real client-go informers run on it unmodified.
type ListerWatcher struct {
	client   *clientv3.Client
	res      Resource
	opts     Options
	ctl      *controls       // shared with WithNamespace's copies
	features *serverFeatures // the same server: shared too
}

// NewListerWatcher returns a ListerWatcher for res over client.
func NewListerWatcher(client *clientv3.Client, res Resource, opts Options) *ListerWatcher {
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	lw := &ListerWatcher{client: client, res: res, opts: opts, ctl: &controls{}, features: &serverFeatures{}}
	lw.features.watchListOff.Store(opts.WatchListOff)
	return lw
}

// WithResource is lw for another resource: the same connection,
// options and served features (a kube-apiserver's feature gates are the
// whole server's).
func (lw *ListerWatcher) WithResource(res Resource) *ListerWatcher {
	c := *lw
	c.res = res
	return &c
}

// WithNamespace returns a ListerWatcher for one namespace ("" for all)
// of the same resource on the same server: its requests go to the
// namespace's path, as a namespaced client-go informer's do, and the
// server's levers (held and dropped watches, features) are shared.
func (lw *ListerWatcher) WithNamespace(ns string) *ListerWatcher {
	c := *lw
	c.opts.Namespace = ns
	return &c
}

// List is ListWithContext without a context.
func (lw *ListerWatcher) List(opts metav1.ListOptions) (runtime.Object, error) {
	return lw.ListWithContext(context.Background(), opts)
}

// Watch is WatchWithContext without a context.
func (lw *ListerWatcher) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return lw.WatchWithContext(context.Background(), opts)
}

// IsWatchListSemanticsUnSupported tells client-go's reflector whether to
// skip watch-list streaming (Options.NoWatchList).
func (lw *ListerWatcher) IsWatchListSemanticsUnSupported() bool { return lw.opts.NoWatchList }

// RequestProgress asks etcd to report progress on this ListerWatcher's
// client's watches; each caught-up watch that allowed bookmarks then sends
// a BOOKMARK at the current revision (E8). etcd answers only when every
// watch on the client's stream has caught up, so a caller that needs a
// bookmark asks until it gets one.
func (lw *ListerWatcher) RequestProgress(ctx context.Context) error {
	return lw.client.RequestProgress(ctx)
}
