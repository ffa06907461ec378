package reflector

import (
	"context"
	"errors"
	"reflect"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// Watch is the watch loop. It consumes w if given (the stream a watch-list
// left open), then opens plain WATCHes from the last synced RV for as long
// as each one closes normally (F4):
//
//	closed normally               → re-watch at once
//	429 or connection refused     → backoff, then re-watch
//	500, while retries are allowed→ re-watch at once
//	any other ending (410, short) → return nil: Run relists after backoff
//	opening the watch failed      → return the error (WatchErrorHandler)
//
// resyncErr delivers a failed Store.Resync, which ends the watch too.
func (r *Reflector) Watch(ctx context.Context, w watch.Interface, resyncErr <-chan error) error {
	retry := &internalErrorRetry{maxDuration: r.opts.MaxInternalErrorRetryDuration, clock: r.clock}
	// A watch handed in after the context ended is stopped too.
	defer func() {
		if w != nil {
			w.Stop()
		}
	}()
	for ctx.Err() == nil {
		start := r.clock.Now()
		fromStart := true // does every event move the last synced RV? (F3)
		if w == nil {
			var err error
			w, fromStart, err = r.openWatch(ctx)
			if err != nil {
				if isRetriable(err) {
					if !r.wait(ctx, StepRewatchBackoff) {
						return nil
					}
					continue
				}
				return err
			}
		}
		_, err := r.consume(ctx, w, start, consumeOptions{store: r.store, stopAtEndBookmark: false, resyncErr: resyncErr},
			func(rv string, sawNonAdded bool) {
				if fromStart || sawNonAdded {
					r.setLastSyncRV(rv)
					if u, ok := r.store.(ResourceVersionUpdater); ok {
						u.UpdateResourceVersion(rv)
					}
				}
			})
		w = nil
		retry.observe(err)
		r.trace(Event{Step: StepWatchEnded, Err: err})
		switch {
		case err == nil:
			continue
		case errors.Is(err, errStopRequested):
			return nil
		case apierrors.IsTooManyRequests(err):
			if !r.wait(ctx, StepRewatchBackoff) {
				return nil
			}
			continue
		case apierrors.IsInternalError(err) && retry.shouldRetry():
			continue
		}
		return nil
	}
	return nil
}

// openWatch opens a plain WATCH from the last synced RV. A watch from ""
// or "0" begins with a synthetic ADDED per existing object, which must not
// move the last synced RV (fromStart is false then; F3).
func (r *Reflector) openWatch(ctx context.Context) (w watch.Interface, fromStart bool, err error) {
	opts := metav1.ListOptions{
		ResourceVersion:     r.LastSyncResourceVersion(),
		TimeoutSeconds:      r.watchTimeout(),
		AllowWatchBookmarks: true,
	}
	r.trace(Event{Step: StepWatch, Options: &opts})
	w, err = r.lw.WatchWithContext(ctx, opts)
	return w, opts.ResourceVersion != "" && opts.ResourceVersion != "0", err
}

// consumeOptions say where a watch's events go and when to stop reading.
type consumeOptions struct {
	store             Store
	stopAtEndBookmark bool // watch-list: return after the initial-events-end bookmark
	resyncErr         <-chan error
}

// consume feeds w's events to the store until w ends, ctx ends, a resync
// fails, or (stopAtEndBookmark) the end of the initial events. setRV is
// called after every processed event with its RV and whether anything but
// ADDED has been seen on this watch. It returns whether the end bookmark
// came, and why the watch ended (nil: closed normally). w is stopped unless
// consume returns at the end bookmark: that stream carries on (F2).
func (r *Reflector) consume(ctx context.Context, w watch.Interface, start time.Time, o consumeOptions, setRV func(rv string, sawNonAdded bool)) (endBookmark bool, err error) {
	sawNonAdded := false
	count := 0
	defer func() {
		if !endBookmark || !o.stopAtEndBookmark {
			w.Stop()
		}
	}()
	for {
		var event watch.Event
		var open bool
		select {
		case <-ctx.Done():
			return endBookmark, errStopRequested
		case err := <-o.resyncErr:
			return endBookmark, err
		case event, open = <-w.ResultChan():
		}
		if !open {
			break
		}
		if event.Type == watch.Error {
			return endBookmark, apierrors.FromObject(event.Object)
		}
		rv, ok := r.checkEvent(ctx, event)
		if !ok {
			continue
		}
		switch event.Type {
		case watch.Modified, watch.Deleted, watch.Bookmark:
			sawNonAdded = true
		}
		if r.apply(ctx, o.store, event) {
			endBookmark = true
		}
		setRV(rv, sawNonAdded)
		count++
		if endBookmark && o.stopAtEndBookmark {
			return true, nil
		}
	}
	if r.clock.Since(start) < time.Second && count == 0 {
		return endBookmark, &VeryShortWatchError{Name: r.name}
	}
	return endBookmark, nil
}

// checkEvent drops events the reflector cannot use: another type or kind
// than expected, a Table, an object without metadata, each reported
// through utilruntime.HandleErrorWithContext in client-go's words. It
// returns the event's resourceVersion.
func (r *Reflector) checkEvent(ctx context.Context, event watch.Event) (string, bool) {
	if r.expectedType != nil {
		if e, a := r.expectedType, reflect.TypeOf(event.Object); e != a {
			r.drop(event, "Unexpected watch event object type")
			utilruntime.HandleErrorWithContext(ctx, nil, "Unexpected watch event object type", "reflector", r.name, "expectedType", e, "actualType", a)
			return "", false
		}
	}
	if r.expectedGVK != nil {
		if e, a := *r.expectedGVK, event.Object.GetObjectKind().GroupVersionKind(); e != a {
			r.drop(event, "Unexpected watch event object gvk")
			utilruntime.HandleErrorWithContext(ctx, nil, "Unexpected watch event object gvk", "reflector", r.name, "expectedGVK", e, "actualGVK", a)
			return "", false
		}
	}
	if isTable(event.Object) {
		r.drop(event, "Unsupported watch event object gvk")
		utilruntime.HandleErrorWithContext(ctx, nil, "Unsupported watch event object gvk", "reflector", r.name, "actualGVK", event.Object.GetObjectKind().GroupVersionKind())
		return "", false
	}
	m, err := meta.Accessor(event.Object)
	if err != nil {
		r.trace(Event{Step: StepEventDropped, Type: event.Type, Object: event.Object, Err: err})
		utilruntime.HandleErrorWithContext(ctx, err, "Unable to understand watch event", "reflector", r.name, "event", event)
		return "", false
	}
	return m.GetResourceVersion(), true
}

// drop traces a dropped event.
func (r *Reflector) drop(event watch.Event, reason string) {
	r.trace(Event{Step: StepEventDropped, Type: event.Type, Object: event.Object, Err: errors.New(reason)})
}

// apply hands one watch event to the store (F3). A store error is
// reported (in client-go's words, per event type) and otherwise ignored:
// the event still counts as processed. It reports whether the event was
// the initial-events-end bookmark.
func (r *Reflector) apply(ctx context.Context, store Store, event watch.Event) (endBookmark bool) {
	defer r.trace(Event{Step: StepEvent, Type: event.Type, Object: event.Object})
	report := func(err error, msg string) {
		if err != nil {
			utilruntime.HandleErrorWithContext(ctx, err, msg, "reflector", r.name, "object", event.Object)
		}
	}
	switch event.Type {
	case watch.Added:
		report(store.Add(event.Object), "Unable to add watch event object to store")
	case watch.Modified:
		report(store.Update(event.Object), "Unable to update watch event object to store")
	case watch.Deleted:
		report(store.Delete(event.Object), "Unable to delete watch event object from store")
	case watch.Bookmark:
		m, _ := meta.Accessor(event.Object)
		endBookmark = m.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true"
		if b, ok := store.(BookmarkStore); ok {
			report(b.Bookmark(m.GetResourceVersion()), "Unable to send bookmark event to store")
		}
	default:
		utilruntime.HandleErrorWithContext(ctx, nil, "Unknown watch event", "reflector", r.name, "event", event)
	}
	return endBookmark
}

// tableGVKs are the kinds of kubectl's Table output.
var tableGVKs = map[schema.GroupVersionKind]bool{
	{Group: "meta.k8s.io", Version: "v1beta1", Kind: "Table"}: true,
	{Group: "meta.k8s.io", Version: "v1", Kind: "Table"}:      true,
}

func isTable(obj runtime.Object) bool {
	u, ok := obj.(*unstructured.Unstructured)
	return ok && u.GetKind() == "Table" && tableGVKs[u.GroupVersionKind()]
}
