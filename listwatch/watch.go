package listwatch

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/cachelab/cachelab/internal/clockctx"
	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// watchRequest is a validated WATCH.
type watchRequest struct {
	filter        filter
	prefix        string // the namespace's (or resource's) key prefix
	key           string // with single, the one key watched
	single        bool   // watch one key, not the prefix (scope)
	rv            int64  // start after this revision
	snapshot      int64  // with initial events: the revision they are read at
	initialEvents bool   // first send ADDED for every current object
	endBookmark   bool   // then a bookmark annotated initial-events-end
	bookmarks     bool   // forward progress notifications as BOOKMARKs
	timeout       time.Duration
}

// WatchWithContext watches the resource from opts.ResourceVersion (E6):
// every change after that revision, in revision order, filtered by the
// selectors. With SendInitialEvents (watch-list, E9), or from RV ""/"0"
// without it (the legacy form), it first sends an ADDED event per current
// object. It ends with an Error event when etcd compacts past it (E7), and
// after TimeoutSeconds.
func (lw *ListerWatcher) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	req, err := parseWatch(opts, lw.res, lw.WatchListFeature())
	if err != nil {
		return nil, err
	}
	req.prefix, req.key, req.single = lw.scope(req.filter, false)
	if req.initialEvents || req.rv == 0 {
		// "Now" (the initial events' snapshot, or the start of a watch
		// from RV "" without them) is fixed before this call returns, so
		// the caller's next write is always seen as an event after it.
		now, err := lw.currentRevision(ctx)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		if req.initialEvents {
			req.snapshot = now
		} else {
			req.rv = now
		}
	}
	// The watch lives until Stop, its timeout, or the end of ctx. The
	// timeout's timer starts now, on the ListerWatcher's clock.
	wctx, cancel := lw.watchContext(ctx, req.timeout)
	w := &watcher{lw: lw, req: req, cancel: cancel, result: make(chan watch.Event), done: make(chan struct{})}
	if err := lw.admit(ctx, w); err != nil {
		cancel()
		return nil, err
	}
	go func() {
		defer lw.forget(w)
		w.run(wctx)
	}()
	return w, nil
}

func parseWatch(opts metav1.ListOptions, res Resource, watchList bool) (watchRequest, error) {
	var req watchRequest
	in, f, err := parseOptions(opts, true, watchList)
	if err != nil {
		return req, err
	}
	req.filter = f
	rv, errs := parseResourceVersion(in.ResourceVersion)
	if errs != nil {
		// The etcd3 store's Invalid error, which the registry reports
		// on the resource (storage/errors InterpretWatchError).
		return req, apierrors.NewInvalid(schema.GroupKind{Group: res.Group, Kind: res.Resource}, "", errs)
	}
	req.rv = rv
	send := in.SendInitialEvents
	req.initialEvents = (send == nil && req.rv == 0) || (send != nil && *send)
	req.bookmarks = in.AllowWatchBookmarks
	req.endBookmark = send != nil && *send && in.AllowWatchBookmarks
	if in.TimeoutSeconds != nil {
		req.timeout = time.Duration(*in.TimeoutSeconds) * time.Second
	}
	return req, nil
}

// watcher is one watch: a goroutine that reads etcd's watch stream and
// sends watch.Events until the stream ends, the timeout passes or Stop.
type watcher struct {
	lw     *ListerWatcher
	req    watchRequest
	cancel context.CancelFunc // idempotent, so Stop may be called often
	result chan watch.Event
	done   chan struct{}
}

// ResultChan is the stream of events; it is closed when the watch ends.
func (w *watcher) ResultChan() <-chan watch.Event { return w.result }

// Stop ends the watch and waits until its goroutine has exited.
func (w *watcher) Stop() {
	w.cancel()
	<-w.done
}

func (w *watcher) run(ctx context.Context) {
	defer close(w.done)
	defer close(w.result)
	initial, rev, ok := w.initialEvents(ctx)
	if !ok {
		w.flush(ctx, initial)
		return
	}
	// etcd is watched from after the snapshot before the initial events
	// are delivered, as kube-apiserver's etcd3 watcher does: a client that
	// is slow to take them does not hold the watch back, so a compaction
	// meanwhile does not break it.
	w.follow(ctx, w.watchEtcd(ctx, rev), initial)
}

// watchEtcd watches the request's range of keys (E16) after rev: its
// prefix, or its one key. Like kube-apiserver's etcd3 watcher for a
// client's watch, it does not ask etcd for progress notifications on
// etcd's own timer (WithProgressNotify: every 10 minutes of wall time); a
// progress request (RequestProgress) still reaches it, since etcd answers
// those on every watch of the stream (E8).
func (w *watcher) watchEtcd(ctx context.Context, rev int64) clientv3.WatchChan {
	opts := []clientv3.OpOption{clientv3.WithRev(rev + 1), clientv3.WithPrevKV()}
	if !w.req.single {
		return w.lw.client.Watch(ctx, w.req.prefix, append(opts, clientv3.WithPrefix())...)
	}
	return w.lw.client.Watch(ctx, w.req.key, opts...)
}

// watchContext is a watch's context: cancelled by Stop and, if timeout is
// set, when the ListerWatcher's clock passes it, the way kube-apiserver
// ends a watch at its TimeoutSeconds.
func (lw *ListerWatcher) watchContext(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	return clockctx.WithTimeout(ctx, lw.opts.Clock, timeout)
}

// initialEvents reads the initial events, if the request wants them,
// and returns them with the revision to watch after; ok is false when
// the watch ends after them (with the Error event they end with).
func (w *watcher) initialEvents(ctx context.Context) (events []watch.Event, rev int64, ok bool) {
	if !w.req.initialEvents {
		return nil, w.req.rv, true
	}
	if w.req.rv > w.req.snapshot {
		return []watch.Event{errorEvent(tooLargeResourceVersion(w.req.rv, w.req.snapshot, 1))}, 0, false
	}
	p, err := w.lw.readPage(ctx, w.initialList())
	if err != nil {
		return []watch.Event{errorEvent(w.lw.listError(ctx, err, listRequest{}))}, 0, false
	}
	items := p.items
	if len(p.corrupt) > 0 {
		items = items[:p.clean] // sent before the value that fails (E12)
	}
	for _, obj := range items {
		events = append(events, watch.Event{Type: watch.Added, Object: obj})
	}
	if len(p.corrupt) > 0 {
		return append(events, errorEvent(apierrors.NewInternalError(p.corrupt[0].err))), 0, false
	}
	if w.req.endBookmark {
		b := w.bookmark(p.rev)
		b.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
		events = append(events, watch.Event{Type: watch.Bookmark, Object: b})
	}
	return events, p.rev, true
}

// initialList is the LIST a watch's initial events are read with: its
// range (E16), at the snapshot.
func (w *watcher) initialList() listRequest {
	start := w.req.prefix
	if w.req.single {
		start = w.req.key
	}
	return listRequest{filter: w.req.filter, prefix: w.req.prefix, start: start, single: w.req.single, rev: w.req.snapshot}
}

// follow relays etcd's watch after the pending (initial) events until it
// ends. Events wait in a per-watch buffer, so that a consumer who is slow
// to read this watch does not hold up etcd's stream, which the client's
// other watches share.
func (w *watcher) follow(ctx context.Context, ch clientv3.WatchChan, pending []watch.Event) {
	for {
		var out chan<- watch.Event // nil (never ready) while nothing is pending
		var head watch.Event
		if len(pending) > 0 {
			out, head = w.result, pending[0]
		}
		select {
		case resp, open := <-ch:
			if !open {
				w.flush(ctx, pending)
				return
			}
			var end bool
			if pending, end = w.receive(resp, pending); end {
				w.flush(ctx, pending)
				return
			}
		case out <- head:
			pending = pending[1:]
		case <-ctx.Done():
			return
		}
	}
}

// receive appends the events one etcd response carries; end reports that
// the watch must end after them (an Error event is the last).
func (w *watcher) receive(resp clientv3.WatchResponse, pending []watch.Event) ([]watch.Event, bool) {
	if err := resp.Err(); err != nil {
		return append(pending, errorEvent(watchError(resp, err))), true
	}
	if resp.IsProgressNotify() {
		if w.req.bookmarks {
			pending = append(pending, watch.Event{Type: watch.Bookmark, Object: w.bookmark(resp.Header.Revision)})
		}
		return pending, false
	}
	for _, ev := range resp.Events {
		e, ok, err := w.translate(ev)
		if err != nil {
			return append(pending, errorEvent(err)), true
		}
		if ok {
			pending = append(pending, e)
		}
	}
	return pending, false
}

// flush delivers what is pending before the watch closes.
func (w *watcher) flush(ctx context.Context, pending []watch.Event) {
	for _, e := range pending {
		if !w.send(ctx, e) {
			return
		}
	}
}

func watchError(resp clientv3.WatchResponse, err error) error {
	if resp.CompactRevision != 0 {
		return apierrors.NewResourceExpired(expiredWatch)
	}
	return apierrors.NewInternalError(err)
}

// translate turns one etcd event into the watch event a client of
// kube-apiserver would see, if any (E5, E6).
func (w *watcher) translate(ev *clientv3.Event) (watch.Event, bool, error) {
	key := string(ev.Kv.Key)
	var cur, prev *unstructured.Unstructured
	var err error
	// Every event but a create must come with its old value, needed or
	// not; etcd leaves it out when it was compacted meanwhile (E17; a
	// race of etcd's own is mended beneath, in FillPreviousValues).
	if !ev.IsCreate() && ev.PrevKv == nil {
		return watch.Event{}, false, apierrors.NewInternalError(fmt.Errorf("etcd event received with PrevKv=nil (key=%q, modRevision=%d, type=%s)",
			key, ev.Kv.ModRevision, ev.Type))
	}
	if ev.Type == clientv3.EventTypePut {
		if cur, err = decodeValue(ev.Kv.Value, ev.Kv.ModRevision); err != nil {
			return watch.Event{}, false, apierrors.NewInternalError(err) // E12
		}
	}
	// The old state matters for a delete, and for a selector (was it in
	// before?). kube-apiserver decodes it only then, so an undecodable
	// old value fails only those (E12).
	if ev.Type == clientv3.EventTypeDelete || (!ev.IsCreate() && !w.req.filter.empty()) {
		// The old state, stamped with this event's revision (E6).
		if prev, err = decodeValue(ev.PrevKv.Value, ev.Kv.ModRevision); err != nil {
			return watch.Event{}, false, apierrors.NewInternalError(err)
		}
	}
	curOK := cur != nil && w.req.filter.matches(cur)
	prevOK := prev != nil && w.req.filter.matches(prev)
	if cur != nil && prev == nil && !ev.IsCreate() {
		prevOK = curOK // without a selector, the old state matched too
	}
	switch {
	case curOK && prevOK:
		return watch.Event{Type: watch.Modified, Object: cur}, true, nil
	case curOK:
		return watch.Event{Type: watch.Added, Object: cur}, true, nil
	case prevOK:
		return watch.Event{Type: watch.Deleted, Object: prev}, true, nil
	}
	return watch.Event{}, false, nil
}

// bookmark is an empty object of the watched kind carrying only rev.
func (w *watcher) bookmark(rev int64) *unstructured.Unstructured {
	b := &unstructured.Unstructured{}
	b.SetGroupVersionKind(w.lw.res.GroupVersionKind())
	b.SetResourceVersion(strconv.FormatInt(rev, 10))
	return b
}

// send delivers e unless the watch is ending.
func (w *watcher) send(ctx context.Context, e watch.Event) bool {
	select {
	case w.result <- e:
		return true
	case <-ctx.Done():
		return false
	}
}

// errorEvent is an Error event carrying err's Status (a 500 for an error
// that has none).
func errorEvent(err error) watch.Event {
	var status metav1.Status
	if s, ok := err.(apierrors.APIStatus); ok {
		status = s.Status()
	} else {
		status = apierrors.NewInternalError(err).Status()
	}
	return watch.Event{Type: watch.Error, Object: &status}
}
