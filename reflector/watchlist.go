package reflector

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	"github.com/cachelab/cachelab/store"
)

// WatchList is the watch-list step (F2): one WATCH with SendInitialEvents
// streams every object as ADDED, then a bookmark annotated
// k8s.io/initial-events-end marks the end of the initial state. The events
// are collected in a temporary store; at the end bookmark they go to
// Store.Replace with the bookmark's RV, and the still-open stream is
// returned for the watch loop to carry on with.
//
//	WATCH ?sendInitialEvents=true&resourceVersionMatch=NotOlderThan
//	  ADDED a@5  ADDED b@7  BOOKMARK@9 {initial-events-end}  │ MODIFIED a@10 ...
//	  └──── temporary store ────────┘  Replace([a b], "9")   │ watch loop
//
// A stream that ends before the end bookmark is retried at once; 429 and a
// refused connection after a backoff; 410 and "too large RV" at once from
// RV "" (F5). Any other failure is returned, and ListAndWatch falls back to
// LIST for this cycle (F1). It returns (nil, nil) if ctx ends.
func (r *Reflector) WatchList(ctx context.Context) (watch.Interface, error) {
	for ctx.Err() == nil {
		temp := r.temporaryStore()
		var rv string
		w, done, err := r.streamInitialEvents(ctx, temp, &rv)
		if err != nil {
			if errors.Is(err, errStopRequested) {
				return nil, nil
			}
			if r.retryWatchList(ctx, err, w != nil) {
				continue
			}
			return nil, err
		}
		if !done {
			continue
		}
		r.setRVUnavailable(false)
		if err := r.storeInitialEvents(ctx, w, temp, rv); err != nil {
			return nil, err
		}
		return w, nil
	}
	return nil, nil
}

// storeInitialEvents replaces the store's content with the initial events,
// once the data consistency detector, if it is on, has found them to be
// etcd's (V6). If that fails or panics, the stream is stopped. (client-go
// leaves it open then: its watchList returns the error, or unwinds,
// without stopping it, and a real server keeps the watch until its
// timeout.)
func (r *Reflector) storeInitialEvents(ctx context.Context, w watch.Interface, temp *store.Cache, rv string) (err error) {
	stored := false
	defer func() {
		if !stored {
			w.Stop()
		}
	}()
	r.checkConsistency(ctx, rv, temp)
	if err := r.replace(temp.List(), rv); err != nil {
		return fmt.Errorf("unable to sync watch-list result: %w", err)
	}
	r.setLastSyncRV(rv)
	stored = true
	return nil
}

// temporaryStore collects the initial events, transformed as the real
// store would transform them.
func (r *Reflector) temporaryStore() *store.Cache {
	return store.New(store.Options{KeyFunc: store.DeletionHandlingMetaNamespaceKeyFunc, Transformer: transformerOf(r.store)})
}

// transformerOf is the store's transform function, if it declares one:
// as a TransformingStore, or as client-go's queues declare it, with a
// Transformer method whose result is client-go's TransformFunc (a named
// type of the same func type, which no interface of this package can
// name without importing client-go), so that a client-go queue given to
// this reflector gets its objects transformed twice in watch-list mode, as
// client-go's reflector does (D8).
func transformerOf(s Store) store.TransformFunc {
	if t, ok := s.(TransformingStore); ok {
		return t.Transformer()
	}
	m := reflect.ValueOf(s).MethodByName("Transformer")
	if !m.IsValid() || m.Type().NumIn() != 0 || m.Type().NumOut() != 1 {
		return nil
	}
	fn := reflect.TypeFor[func(any) (any, error)]()
	out := m.Call(nil)[0]
	if out.Kind() != reflect.Func || !out.Type().ConvertibleTo(fn) || out.IsNil() {
		return nil
	}
	return out.Convert(fn).Interface().(func(any) (any, error))
}

// streamInitialEvents opens one watch-list request and reads it into temp
// until the end bookmark (done) or until it ends. rv follows the RV of the
// events after the first non-ADDED one: in practice, the bookmark's.
func (r *Reflector) streamInitialEvents(ctx context.Context, temp *store.Cache, rv *string) (w watch.Interface, done bool, err error) {
	opts := metav1.ListOptions{
		ResourceVersion:      r.rewatchRV(),
		AllowWatchBookmarks:  true,
		SendInitialEvents:    ptr.To(true),
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
		TimeoutSeconds:       r.watchTimeout(),
	}
	start := r.clock.Now()
	r.trace(Event{Step: StepWatchList, Options: &opts})
	w, err = r.lw.WatchWithContext(ctx, opts)
	if err != nil {
		return nil, false, err
	}
	done, err = r.consume(ctx, w, start, consumeOptions{store: temp, stopAtEndBookmark: true},
		func(eventRV string, sawNonAdded bool) {
			if sawNonAdded {
				*rv = eventRV
			}
		})
	if err == nil && !done {
		r.trace(Event{Step: StepWatchEnded, Err: errors.New("watch-list stream ended before the initial-events-end bookmark")})
	}
	return w, done, err
}

// retryWatchList decides whether a failed watch-list is retried in
// watch-list mode: after a backoff for 429 and refused connections, at once
// from RV "" for 410 and "too large RV" (F5). opened says whether the
// request had opened a stream (which then ended) or was refused.
func (r *Reflector) retryWatchList(ctx context.Context, err error, opened bool) bool {
	if opened {
		r.trace(Event{Step: StepWatchEnded, Err: err})
	} else {
		r.trace(Event{Step: StepWatchRefused, Err: err})
	}
	switch {
	case isRetriable(err):
		r.wait(ctx, StepRewatchBackoff)
		return true
	case isExpired(err) || isTooLargeRV(err):
		r.markRVUnavailable(err)
		return true
	}
	return false
}
