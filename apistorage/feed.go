package apistorage

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/utils/clock"
)

// feed is the cacher's storage: the etcd3 store, seen from the cacher's
// side. It does three things a real kube-apiserver does not need:
//
//   - it notes the revision of the last thing it handed the cacher (a
//     list, an event, a bookmark), so CacheCaughtUp can tell when the
//     cache has taken in a revision;
//   - it stamps each event with the time on the server's clock at which
//     etcd delivered it, where etcd3's watcher stamps the wall clock's:
//     the cache keeps about 75 s of events by those stamps (its history
//     window, C4), and in a simulation only the scenario's clock is time;
//   - it can hold the cacher back (HoldCache, ReleaseCache): the events
//     etcd sends the cacher wait in the feed, and the cache falls behind
//     etcd the way a busy kube-apiserver's does for a moment, for as long
//     as a scenario needs to show it. While a LIST or WATCH is in
//     progress on the server, what waited is handed over one event at a
//     time, each once the cacher is quiet again (settle): handed over at
//     once, the revision at which such a request (a consistent read, a
//     watch-list) took its snapshot depended on how the goroutines were
//     scheduled (fuzz seed 348).
//
// Apart from the stamps, it never changes what passes through.
type feed struct {
	storage.Interface

	mu      sync.Mutex
	changed *sync.Cond // on mu: held or closed changed
	held    bool
	closed  bool
	clock   clock.PassiveClock // the server's: events are stamped with its time
	given   uint64             // the revision of the last thing handed over (list, event or bookmark)
	pending int                // events etcd has sent that the feed has not handed over
	stalled int                // the cacher's calls (a LIST, a WATCH) waiting while held
	compact int64              // the compaction revision the cacher's compactor last read
	// waiting reports whether a LIST or WATCH is in progress on the
	// server (one may wait in the cache for a revision), and quiet
	// whether the cacher has done all it can with what it was handed
	// (Server.Quiescent): settle asks both.
	waiting, quiet func() bool
}

func newFeed(etcd storage.Interface, clk clock.PassiveClock, held bool, waiting, quiet func() bool) *feed {
	f := &feed{Interface: etcd, clock: clk, held: held, waiting: waiting, quiet: quiet}
	f.changed = sync.NewCond(&f.mu)
	return f
}

func (f *feed) close() {
	f.mu.Lock()
	f.closed = true
	f.changed.Broadcast()
	f.mu.Unlock()
}

// hold makes the cacher wait for what etcd sends it; hold(false) lets it go.
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
		f.stalled++
		f.changed.Wait()
		f.stalled--
	}
	return !f.closed
}

// CompactRevision is what the cacher's snapshot compactor polls (every
// 15 s of the clock): the revision etcd was last compacted at, as
// kube-apiserver knows it. The feed notes what it answered, so that
// NextWork can tell when the next poll will find something new.
func (f *feed) CompactRevision() int64 {
	rev := f.Interface.CompactRevision()
	f.mu.Lock()
	f.compact = rev
	f.mu.Unlock()
	return rev
}

// compactSeen is the revision the compactor last read.
func (f *feed) compactSeen() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.compact
}

// gave notes that the cacher was handed revision rv.
func (f *feed) gave(rv uint64) {
	f.mu.Lock()
	f.given = max(f.given, rv)
	f.mu.Unlock()
}

// GetList is the cacher's LIST of etcd (its start, and each relist).
func (f *feed) GetList(ctx context.Context, key string, opts storage.ListOptions, listObj runtime.Object) error {
	if !f.waitOpen() {
		return context.Canceled
	}
	if err := f.Interface.GetList(ctx, key, opts, listObj); err != nil {
		return err
	}
	if l, err := meta.ListAccessor(listObj); err == nil {
		rv, _ := storage.APIObjectVersioner{}.ParseResourceVersion(l.GetResourceVersion())
		f.gave(rv)
	}
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
	go w.run()
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

func (w *feedWatch) run() {
	defer close(w.out)
	f := w.feed
	draining := false // handing over what waited while the feed was held
	for {
		var e watch.Event
		var ok bool
		select {
		case e, ok = <-w.inner.ResultChan():
		default:
			draining = false // nothing waits: what comes next, etcd sends now
			e, ok = <-w.inner.ResultChan()
		}
		if !ok {
			return
		}
		f.mu.Lock()
		f.pending++
		draining = draining || f.held
		f.mu.Unlock()
		if !f.waitOpen() {
			return
		}
		if t, ok := e.Object.(storage.WatchEventWithRecordTime); ok {
			e.Object = &stamped{Object: t.Unwrap(), at: f.clock.Now()}
		}
		select {
		case w.out <- e:
		case <-w.done:
			return
		}
		f.mu.Lock()
		f.pending--
		f.mu.Unlock()
		if e.Type != watch.Error {
			// An initial event (a watch-list's) carries its object's
			// own revision, older than the list's: max keeps the list's.
			rv, _ := storage.APIObjectVersioner{}.ObjectResourceVersion(e.Object)
			f.gave(rv)
		}
		if draining && !w.settle() {
			return
		}
	}
}

// drainWait bounds how long the feed waits for the cacher to be quiet
// between two events that waited: a cacher that cannot be (a watcher
// blocked on a client that does not read) must not stop the feed.
const drainWait = time.Second

// settle waits, while the feed drains what waited, until the cacher is
// quiet (or drainWait has passed); false once the watch has stopped.
// With no request in progress, none can be waiting for a revision, and
// the cacher takes the next event at once, as it takes etcd's.
func (w *feedWatch) settle() bool {
	if w.feed.quiet == nil || !w.feed.waiting() {
		return true
	}
	deadline := time.Now().Add(drainWait)
	for !w.feed.quiet() && time.Now().Before(deadline) {
		select {
		case <-w.done:
			return false
		case <-time.After(time.Millisecond):
		}
	}
	return true
}

// CacheCaughtUp reports whether the cache has taken in everything etcd
// had at revision rev: it has been handed rev (or the feed holds it back
// and has handed everything else) and has processed it. Without the
// cache it is always true.
func (s *Server) CacheCaughtUp(rev uint64) bool {
	c := s.current()
	if c == nil {
		return true
	}
	f := c.feed
	f.mu.Lock()
	given, held, waiting := f.given, f.held, f.pending > 0 || f.stalled > 0
	f.mu.Unlock()
	if given < rev && !(held && waiting) {
		return false
	}
	if !c.cacher.Ready() {
		return held
	}
	synced, err := c.cacher.LastSyncResourceVersion()
	return err == nil && synced >= min(given, rev)
}

// HoldCache makes the watch cache fall behind etcd: what etcd sends the
// cacher waits in the feed until ReleaseCache. (No-op without the cache.)
func (s *Server) HoldCache() { s.hold(true) }

// ReleaseCache lets the cacher take in what waited.
func (s *Server) ReleaseCache() { s.hold(false) }

// Held reports whether the cache is held (HoldCache).
func (s *Server) Held() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held
}

func (s *Server) hold(on bool) {
	s.mu.Lock()
	s.held = on
	c := s.cache
	s.mu.Unlock()
	if c != nil {
		c.feed.hold(on)
	}
}

// CacheState describes how far the cache has got, for messages.
func (s *Server) CacheState() string {
	c := s.current()
	if c == nil {
		return "no watch cache"
	}
	f := c.feed
	f.mu.Lock()
	given, held, pending := f.given, f.held, f.pending
	f.mu.Unlock()
	state := fmt.Sprintf("handed rv %d to the cacher", given)
	if held {
		state += fmt.Sprintf(", held with %d event(s) waiting", pending)
	}
	if !c.cacher.Ready() {
		return state + ", not ready"
	}
	synced, err := c.cacher.LastSyncResourceVersion()
	if err != nil {
		return state + ": " + err.Error()
	}
	return fmt.Sprintf("%s, which has taken in rv %d", state, synced)
}

// stamped is an event's object with the time etcd delivered it, as
// etcd3's watcher wraps it for the cache (storage.WatchEventWithRecordTime).
type stamped struct {
	runtime.Object
	at time.Time
}

var _ storage.WatchEventWithRecordTime = &stamped{}

func (s *stamped) GetObjectMeta() metav1.Object {
	m, _ := meta.Accessor(s.Object)
	return m
}

func (s *stamped) DeepCopyObject() runtime.Object {
	return &stamped{Object: s.Object.DeepCopyObject(), at: s.at}
}

func (s *stamped) RecordTime() time.Time  { return s.at }
func (s *stamped) Unwrap() runtime.Object { return s.Object }
