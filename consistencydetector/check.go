package consistencydetector

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"
)

// RetrieveItemsFunc returns the items to check: what the caller received
// and keeps (a reflector's temporary store's List).
type RetrieveItemsFunc[U any] func() []U

// ListFunc sends the LIST the check compares with (a ListerWatcher's
// ListWithContext). Its type parameter lets a typed client's List fit
// without a wrapper.
type ListFunc[T runtime.Object] func(ctx context.Context, options metav1.ListOptions) (T, error)

// TransformFunc is applied to each listed item before the comparison, as
// the caller's store applied it to each retrieved one. It has client-go's
// shape; any func(any) (any, error) converts to it.
type TransformFunc func(interface{}) (interface{}, error)

// retryInterval is how often a failed LIST is sent again (V4).
const retryInterval = time.Second

// CheckDataConsistency compares the items retrieveItemsFn returns with a
// LIST, sent through listFn, of exactly lastSyncedResourceVersion, and
// panics with "data inconsistency detected for <identity>, panicking!"
// when they differ (V5). It does not look at the process's switch: the
// caller does (IsDataConsistencyDetectionForWatchListEnabled).
//
// listOptions are the options the items were received with; the LIST
// keeps them but for its resourceVersion and match (V3), and no LIST is
// sent at all when they could not form a valid exact one (V2). A failing
// LIST is retried every second until ctx ends; the check then gives up
// quietly, with an error in the log (V4). identity names the caller in
// the log and in the panic; it may be empty when ctx's logger names it.
func CheckDataConsistency[T runtime.Object, U any](ctx context.Context, identity string, lastSyncedResourceVersion string, listFn ListFunc[T], listItemTransformFunc TransformFunc, listOptions metav1.ListOptions, retrieveItemsFn RetrieveItemsFunc[U]) {
	logger := klog.FromContext(ctx)
	if identity != "" {
		logger = klog.LoggerWithName(logger, identity)
	}
	if !canListExactly(lastSyncedResourceVersion, listOptions) {
		logger.V(4).Info("Data consistency check is enabled but the parameters (RV, ListOptions) doesn't allow for creating a valid LIST request. Skipping the data consistency check.")
		return
	}
	logger.Info("Warning: data consistency check is enabled, this will result in an additional call to the API server.")
	// What was received is read before the LIST is sent: its length
	// decides the LIST's limit.
	retrieved := metaObjects(retrieveItemsFn())
	opts := exactListOptions(lastSyncedResourceVersion, listOptions, len(retrieved))
	list, ok := listUntilAnswered(ctx, logger, listFn, opts)
	if !ok {
		return
	}
	listed := metaObjects(transformItems(extractItems(list), listItemTransformFunc))
	compare(logger, identity, listed, retrieved)
}

// canListExactly reports whether a LIST with resourceVersionMatch=Exact
// at rv could be valid (V2): kube-apiserver's validation refuses an
// exact match with a continue token, or with RV "0".
func canListExactly(rv string, opts metav1.ListOptions) bool {
	return opts.Continue == "" && rv != "0"
}

// exactListOptions is the LIST that reads rv as etcd had it (V3): opts
// with the RV and an exact match. (kube-apiserver answers it from etcd,
// or from its watch cache's snapshot of rv when it keeps one.) A request at RV "0" is served by the watch
// cache, which ignores its limit; if more items came back than the limit
// allowed, that happened, and the LIST must not be limited either to be
// comparable. Fewer items than the limit mean there was nothing more, and
// the limit stays.
func exactListOptions(rv string, opts metav1.ListOptions, retrieved int) metav1.ListOptions {
	if opts.ResourceVersion == "0" && opts.Limit > 0 && int64(retrieved) > opts.Limit {
		opts.Limit = 0
	}
	opts.ResourceVersion = rv
	opts.ResourceVersionMatch = metav1.ResourceVersionMatchExact
	return opts
}

// listUntilAnswered sends the LIST until it answers (V4): at once, then
// at each tick of a one-second ticker started before the first try, so
// a slow failure is retried sooner, as a ticker does. Once ctx has ended
// no further try is made, and ok is false. The ticker is the real
// clock's, as client-go's (wait.PollUntilContextCancel); the tests run
// it in a testing/synctest bubble.
func listUntilAnswered[T runtime.Object](ctx context.Context, logger klog.Logger, listFn ListFunc[T], opts metav1.ListOptions) (list runtime.Object, ok bool) {
	tick := time.NewTicker(retryInterval)
	defer tick.Stop()
	for {
		if list, ok := tryList(ctx, logger, listFn, opts); ok {
			return list, true
		}
		select {
		case <-ctx.Done():
		case <-tick.C:
		}
		// A tick and the end may come together; the end wins.
		if err := ctx.Err(); err != nil {
			logger.Error(err, "Failed to list data from the server, the data consistency check won't be performed, stopCh was closed")
			return nil, false
		}
	}
}

// tryList sends the LIST once. A failure is logged and retried: the check
// runs only in CI, where a flaky LIST is not what is being tested. A
// panic in listFn is handled as any panic of a polled condition
// (utilruntime.HandleCrashWithContext): the process crashes, unless
// utilruntime.ReallyCrash is false, and then it counts as a failed try.
func tryList[T runtime.Object](ctx context.Context, logger klog.Logger, listFn ListFunc[T], opts metav1.ListOptions) (list runtime.Object, ok bool) {
	defer utilruntime.HandleCrashWithContext(ctx)
	got, err := listFn(ctx, opts)
	if err != nil {
		logger.Info("Failed to list data from the server, retrying until context is canceled", "err", err)
		return nil, false
	}
	return got, true
}

// extractItems is the list's items. A list that has none cannot come
// from a ListFunc, so failing to read them is a broken invariant.
func extractItems(list runtime.Object) []runtime.Object {
	items, err := meta.ExtractListWithAlloc(list)
	if err != nil {
		panic(err)
	}
	return items
}

// transformItems applies the caller's transform to each listed item, in
// place, as its store did to each retrieved one. A transform that fails,
// or returns something that is not an object, panics.
func transformItems(items []runtime.Object, transform TransformFunc) []runtime.Object {
	if transform == nil {
		return items
	}
	for i, item := range items {
		out, err := transform(item)
		if err != nil {
			panic(err)
		}
		items[i] = out.(runtime.Object)
	}
	return items
}

// metaObjects reads each item's metadata accessor; an item without
// metadata cannot be compared, and panics.
func metaObjects[T any](items []T) []metav1.Object {
	out := make([]metav1.Object, len(items))
	for i, item := range items {
		m, err := meta.Accessor(item)
		if err != nil {
			panic(err)
		}
		out[i] = m
	}
	return out
}
