package world

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/cachelab/cachelab/listwatch"
)

// Server is what a Conn's requests go to, in one of the two worlds:
//
//   - etcd: listwatch's ListerWatcher, kube-apiserver with its watch
//     cache off, every request read from etcd (cachelab's own, E1-E13);
//   - watchcache: apistorage's, kube-apiserver's real storage layer
//     (k8s.io/apiserver's cacher and etcd3 store) over the same etcd.
type Server interface {
	ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error)
	WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
	IsWatchListSemanticsUnSupported() bool
	// ExpiredContinue is the error for a LIST whose continue token etcd
	// has compacted away (the expire-continue lever).
	ExpiredContinue(opts metav1.ListOptions) error
	// RequestProgress asks etcd to report progress on the server's
	// watches of it.
	RequestProgress(ctx context.Context) error
	SetWatchListFeature(on bool)
}

// apistorage's ListerWatcher is a Server too (package sim/full says so).
var _ Server = (*listwatch.ListerWatcher)(nil)
