package apistorage

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/storage"
)

// feed is the cacher's storage: the etcd3 store, seen from the cacher's
// side. It does two things a real kube-apiserver does not need:
//
//   - it keeps what the cacher was told (a copy of every object by key,
//     and the events in order), so the server can tell which of them a
//     watch of the cache will send on, and so when a watch has caught up;
//   - it can hold the cacher back (Hold, Release): the events etcd sends
//     the cacher wait in the feed, and the cache falls behind etcd the way
//     a busy kube-apiserver's does for a moment, for as long as a scenario
//     needs to show it.
//
// It never changes what passes through.
type feed struct {
	storage.Interface

	mu      sync.Mutex
	changed *sync.Cond // on mu: held or closed changed
	held    bool
	closed  bool
	objects map[string]runtime.Object // key -> the object as the cacher last got it
	events  []fedEvent                // what the cacher got since its last list
	base    uint64                    // the revision of that list
	given   uint64                    // the revision of the last thing handed over (list, event or bookmark)
	pending int                       // events etcd has sent that the feed has not handed over
}

// fedEvent is one change the cacher was given: the object before and
// after it (nil when there was none).
type fedEvent struct {
	rv        uint64
	key       string
	prev, cur runtime.Object
}

func newFeed(etcd storage.Interface) *feed {
	f := &feed{Interface: etcd, objects: map[string]runtime.Object{}}
	f.changed = sync.NewCond(&f.mu)
	return f
}

func (f *feed) close() {
	f.mu.Lock()
	f.closed = true
	f.changed.Broadcast()
	f.mu.Unlock()
}

// hold makes the cacher wait for what etcd sends it; release lets it go.
func (f *feed) hold(on bool) {
	f.mu.Lock()
	f.held = on
	f.changed.Broadcast()
	f.mu.Unlock()
}

// waitOpen waits while the feed is held; false once it is closed.
func (f *feed) waitOpen() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for f.held && !f.closed {
		f.changed.Wait()
	}
	return !f.closed
}

// GetList is the cacher's LIST of etcd (its start, and each relist).
func (f *feed) GetList(ctx context.Context, key string, opts storage.ListOptions, listObj runtime.Object) error {
	if !f.waitOpen() {
		return context.Canceled
	}
	if err := f.Interface.GetList(ctx, key, opts, listObj); err != nil {
		return err
	}
	items, err := meta.ExtractList(listObj)
	if err != nil {
		return err
	}
	var rv uint64
	if l, err := meta.ListAccessor(listObj); err == nil {
		rv, _ = storage.APIObjectVersioner{}.ParseResourceVersion(l.GetResourceVersion())
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if opts.Predicate.Continue == "" {
		f.objects, f.events, f.base = map[string]runtime.Object{}, nil, rv
	}
	for _, it := range items {
		f.objects[keyOfObject(it)] = it
	}
	f.given = max(f.given, rv)
	return nil
}

// Watch is the cacher's WATCH of etcd. Its events reach the cacher one by
// one through the feed.
func (f *feed) Watch(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, error) {
	if !f.waitOpen() {
		return nil, context.Canceled
	}
	inner, err := f.Interface.Watch(ctx, key, opts)
	if err != nil {
		return nil, err
	}
	w := &feedWatch{feed: f, inner: inner, out: make(chan watch.Event), done: make(chan struct{})}
	initial := opts.SendInitialEvents != nil && *opts.SendInitialEvents
	go w.run(initial)
	return w, nil
}

type feedWatch struct {
	feed     *feed
	inner    watch.Interface
	out      chan watch.Event
	done     chan struct{}
	stopOnce sync.Once
}

func (w *feedWatch) ResultChan() <-chan watch.Event { return w.out }

func (w *feedWatch) Stop() {
	w.stopOnce.Do(func() { close(w.done) })
	w.inner.Stop()
}

func (w *feedWatch) run(initial bool) {
	defer close(w.out)
	f := w.feed
	if initial { // a watch-list: its initial events replace what the cacher had
		f.mu.Lock()
		f.objects, f.events = map[string]runtime.Object{}, nil
		f.mu.Unlock()
	}
	for e := range w.inner.ResultChan() {
		f.mu.Lock()
		f.pending++
		f.mu.Unlock()
		if !f.waitOpen() {
			return
		}
		select {
		case w.out <- e:
		case <-w.done:
			return
		}
		f.mu.Lock()
		f.pending--
		initial = f.note(e, initial)
		f.mu.Unlock()
	}
}

// note records an event handed to the cacher; it returns whether the
// watch is still sending initial events.
func (f *feed) note(e watch.Event, initial bool) bool {
	if e.Type == watch.Error {
		return initial
	}
	rv, _ := storage.APIObjectVersioner{}.ObjectResourceVersion(e.Object)
	if e.Type == watch.Bookmark {
		if initial && isInitialEventsEnd(e.Object) {
			f.base, initial = rv, false
		}
		f.given = max(f.given, rv)
		return initial
	}
	key := keyOfObject(e.Object)
	prev := f.objects[key]
	var cur runtime.Object
	if e.Type == watch.Deleted {
		delete(f.objects, key)
	} else {
		f.objects[key], cur = e.Object, e.Object
	}
	if !initial {
		f.events = append(f.events, fedEvent{rv: rv, key: key, prev: prev, cur: cur})
		f.given = max(f.given, rv)
	}
	return initial
}

// keyOfObject is the feed's key for an object: namespace/name.
func keyOfObject(obj runtime.Object) string {
	m, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	if u, ok := obj.(*unstructured.Unstructured); ok && u.GetNamespace() == "" {
		return m.GetName()
	}
	return m.GetNamespace() + "/" + m.GetName()
}

// isInitialEventsEnd reports whether a bookmark ends a watch's initial
// events.
func isInitialEventsEnd(obj runtime.Object) bool {
	m, err := meta.Accessor(obj)
	return err == nil && m.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true"
}

// CacheCaughtUp reports whether the cache has taken in everything etcd
// had at revision rev: it has been handed rev (or the feed holds it back
// and has handed everything else) and has processed it. Without the
// cache it is always true.
func (s *Server) CacheCaughtUp(rev uint64) bool {
	if s.cacher == nil {
		return true
	}
	f := s.feed
	f.mu.Lock()
	given, held, pending := f.given, f.held, f.pending
	f.mu.Unlock()
	if given < rev && !(held && pending > 0) {
		return false
	}
	if !s.cacher.Ready() {
		return held
	}
	synced, err := s.cacher.LastSyncResourceVersion()
	return err == nil && synced >= min(given, rev)
}

// CaughtUp reports whether the watch has handed over every event the
// cache has taken in that it will send: the changes after its start that
// its selectors and namespace let through, as the cacher's watchers
// decide (an object that passes before or after the change).
func (w *Watch) CaughtUp() bool {
	w.mu.Lock()
	start, started, sent := w.start, w.started, w.sent
	w.mu.Unlock()
	if w.srv.feed == nil {
		return true
	}
	if !started {
		return false
	}
	f := w.srv.feed
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := len(f.events) - 1; i >= 0; i-- {
		e := f.events[i]
		if e.rv <= max(start, sent) {
			return true
		}
		if w.passes(e.key, e.cur) || w.passes(e.key, e.prev) {
			return false
		}
	}
	return true
}

// passes reports whether the watch's scope and selectors let obj (at
// key namespace/name) through.
func (w *Watch) passes(key string, obj runtime.Object) bool {
	if obj == nil {
		return false
	}
	k, err := w.srv.keyOf(obj)
	if err != nil {
		return false
	}
	if w.recursive {
		if !strings.HasPrefix(k, strings.TrimSuffix(w.key, "/")+"/") {
			return false
		}
	} else if k != w.key {
		return false
	}
	ok, err := w.pred.Matches(obj)
	return err == nil && ok
}

// HoldCache makes the watch cache fall behind etcd: what etcd sends the
// cacher waits in the feed until ReleaseCache. (No-op without the cache.)
func (s *Server) HoldCache() {
	if s.feed != nil {
		s.feed.hold(true)
	}
}

// ReleaseCache lets the cacher take in what waited.
func (s *Server) ReleaseCache() {
	if s.feed != nil {
		s.feed.hold(false)
	}
}

// CacheState describes how far the cache has got, for messages.
func (s *Server) CacheState() string {
	if s.cacher == nil {
		return "no watch cache"
	}
	f := s.feed
	f.mu.Lock()
	given, held, pending := f.given, f.held, f.pending
	f.mu.Unlock()
	state := fmt.Sprintf("handed rv %d to the cacher", given)
	if held {
		state += fmt.Sprintf(", held with %d event(s) waiting", pending)
	}
	if !s.cacher.Ready() {
		return state + ", not ready"
	}
	synced, err := s.cacher.LastSyncResourceVersion()
	if err != nil {
		return state + ": " + err.Error()
	}
	return fmt.Sprintf("%s, which has taken in rv %d", state, synced)
}
