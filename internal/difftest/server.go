package difftest

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// Server is a scripted, in-memory stand-in for kube-apiserver: the
// ListerWatcher of the reflector and informer differential tests that run
// inside a testing/synctest bubble, where etcd cannot. It follows the
// rules listwatch implements over etcd (E3-E9) closely enough for a
// reflector: one revision counter, LIST at the current revision (paged
// when asked, except at RV "0"), 410 below the compaction point, 504 for a
// future RV, watch-list with the end bookmark, legacy watches with
// synthetic ADDED events, and bookmarks on demand. Its levers fail the next
// LIST or WATCH, end or break open watches, and compact.
//
// Every request is recorded (Requests), so a test compares what two
// implementations asked for. Each side gets its own Server; a script
// applies every write to both.
type Server struct {
	mu        sync.Mutex
	rev       int64
	objs      map[string]*unstructured.Unstructured
	history   []serverEvent
	compacted int64
	watches   []*serverWatch
	requests  []Request
	failList  []error
	failWatch []error
	snapshots map[string]snapshot // paged LISTs in progress, by token prefix
	holding   bool                // HoldWatches: events wait in held
	held      []watch.Event       // written while holding, not yet sent
	// NoWatchList makes the server declare it cannot stream initial
	// events (IsWatchListSemanticsUnSupported).
	NoWatchList bool
	// SkipEndBookmark leaves out the initial-events-end bookmark of a
	// watch-list, so the stream never completes its initial state (F2).
	SkipEndBookmark bool
	// EmptyListRV serves lists without a resourceVersion, as some
	// hand-written ListerWatchers do (F3's RV "" watch).
	EmptyListRV bool
	// LoseFromWatchList names objects (ns/name) a watch-list's initial
	// events leave out, while a LIST still has them: a watch cache that
	// lost them, for the data consistency detector to find (V6).
	LoseFromWatchList map[string]bool
}

type snapshot struct {
	rev   int64
	items []*unstructured.Unstructured
}

type serverEvent struct {
	rev int64
	typ watch.EventType
	obj *unstructured.Unstructured
}

// Request is one LIST or WATCH as the server received it.
type Request struct {
	Verb string // "list" or "watch"
	Opts metav1.ListOptions
	At   time.Time // the (bubble's) time it arrived
}

// NewServer returns an empty server at revision 1.
func NewServer() *Server {
	return &Server{rev: 1, objs: map[string]*unstructured.Unstructured{}, snapshots: map[string]snapshot{}}
}

// IsWatchListSemanticsUnSupported is the watch-list opt-out (F1).
func (s *Server) IsWatchListSemanticsUnSupported() bool { return s.NoWatchList }

// Rev is the current revision.
func (s *Server) Rev() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rev
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Write applies one change: Added or Modified stores obj (a copy, stamped
// with the new revision), Deleted removes the key. Open watches hear it.
func (s *Server) Write(typ watch.EventType, obj *unstructured.Unstructured) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rev++
	o := obj.DeepCopy()
	key := objKey(o)
	if typ == watch.Deleted {
		if last, ok := s.objs[key]; ok {
			o = last.DeepCopy()
		}
		delete(s.objs, key)
	}
	o.SetResourceVersion(strconv.FormatInt(s.rev, 10))
	if typ != watch.Deleted {
		s.objs[key] = o
	}
	ev := serverEvent{rev: s.rev, typ: typ, obj: o}
	s.history = append(s.history, ev)
	if s.holding {
		s.held = append(s.held, watch.Event{Type: typ, Object: o})
		return
	}
	for _, w := range s.watches {
		w.send(watch.Event{Type: typ, Object: o.DeepCopy()})
	}
}

// HoldWatches keeps the events of later writes from open watches until
// ReleaseWatches: the server has them (a LIST sees them), the watchers do
// not yet, as when a watch stream lags. The controller tests use it to
// make a cache older than a write just made.
func (s *Server) HoldWatches() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.holding = true
}

// ReleaseWatches sends the held events, in order, to the open watches and
// stops holding.
func (s *Server) ReleaseWatches() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.held {
		for _, w := range s.watches {
			w.send(watch.Event{Type: e.Type, Object: e.Object.DeepCopyObject()})
		}
	}
	s.holding, s.held = false, nil
}

// Compact forgets history up to the current revision.
func (s *Server) Compact() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.compacted = s.rev
}

// FailNextList makes the next LIST fail with err (panic, if err is a
// Panic); calls queue up.
func (s *Server) FailNextList(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failList = append(s.failList, err)
}

// FailNextWatch makes the next WATCH call fail with err (panic, if err is
// a Panic); calls queue up.
func (s *Server) FailNextWatch(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failWatch = append(s.failWatch, err)
}

// CloseWatches ends every open watch normally (as a watch timeout does).
func (s *Server) CloseWatches() { s.endWatches(nil) }

// BreakWatches ends every open watch with an Error event carrying status.
func (s *Server) BreakWatches(status *metav1.Status) { s.endWatches(status) }

func (s *Server) endWatches(status *metav1.Status) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range s.watches {
		if status != nil {
			w.send(watch.Event{Type: watch.Error, Object: status})
		}
		w.close()
	}
	s.watches = nil
}

// Bookmark sends a BOOKMARK at the current revision to every watch that
// allowed bookmarks.
func (s *Server) Bookmark() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range s.watches {
		if w.bookmarks {
			w.send(watch.Event{Type: watch.Bookmark, Object: bookmarkObject(s.rev, false)})
		}
	}
}

// SendRaw sends e as it is to every open watch.
func (s *Server) SendRaw(e watch.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range s.watches {
		w.send(e)
	}
}

// OpenWatches is how many watches are open.
func (s *Server) OpenWatches() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.watches)
}

// List implements client-go's ListerWatcher.
func (s *Server) List(opts metav1.ListOptions) (runtime.Object, error) {
	return s.ListWithContext(context.Background(), opts)
}

// Watch implements client-go's ListerWatcher.
func (s *Server) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return s.WatchWithContext(context.Background(), opts)
}

// ListWithContext serves a LIST (E3, E4).
func (s *Server) ListWithContext(_ context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, Request{Verb: "list", Opts: opts, At: time.Now()})
	if len(s.failList) > 0 {
		err := s.failList[0]
		s.failList = s.failList[1:]
		if p, ok := err.(Panic); ok {
			panic(p.Value)
		}
		return nil, err
	}
	if opts.Continue != "" {
		return s.continueLocked(opts)
	}
	if err := s.checkRVLocked(opts.ResourceVersion, "list"); err != nil {
		return nil, err
	}
	items := s.sortedLocked()
	if opts.Limit > 0 && opts.ResourceVersion != "0" {
		id := strconv.Itoa(len(s.snapshots))
		s.snapshots[id] = snapshot{rev: s.rev, items: items}
		return s.pageLocked(id, 0, opts.Limit), nil
	}
	return s.listOf(items, ""), nil
}

func (s *Server) continueLocked(opts metav1.ListOptions) (runtime.Object, error) {
	id, offset, _ := strings.Cut(opts.Continue, ":")
	snap, ok := s.snapshots[id]
	if !ok {
		return nil, apierrors.NewBadRequest("bad continue token")
	}
	if snap.rev < s.compacted {
		return nil, apierrors.NewResourceExpired("The provided continue parameter is too old")
	}
	n, _ := strconv.Atoi(offset)
	return s.pageLocked(id, n, opts.Limit), nil
}

func (s *Server) pageLocked(id string, from int, limit int64) *unstructured.UnstructuredList {
	items := s.snapshots[id].items
	to := min(len(items), from+int(limit))
	next := ""
	if to < len(items) {
		next = id + ":" + strconv.Itoa(to)
	}
	return s.listOf(items[from:to], next)
}

func (s *Server) listOf(items []*unstructured.Unstructured, next string) *unstructured.UnstructuredList {
	l := &unstructured.UnstructuredList{}
	l.SetAPIVersion("v1")
	l.SetKind("PodList")
	if !s.EmptyListRV {
		l.SetResourceVersion(strconv.FormatInt(s.rev, 10))
	}
	l.SetContinue(next)
	for _, o := range items {
		l.Items = append(l.Items, *o.DeepCopy())
	}
	return l
}

// checkRVLocked applies the RV rules of a request: a future RV is 504
// "too large", one below the compaction point 410 (RV "" and "0" are
// always fine).
func (s *Server) checkRVLocked(rv, verb string) error {
	if rv == "" || rv == "0" {
		return nil
	}
	n, err := strconv.ParseInt(rv, 10, 64)
	if err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("invalid resource version %q", rv))
	}
	if n > s.rev {
		return tooLargeRV(n, s.rev)
	}
	if n < s.compacted {
		return apierrors.NewResourceExpired(fmt.Sprintf("The resourceVersion for the provided %s is too old.", verb))
	}
	return nil
}

func tooLargeRV(asked, current int64) error {
	err := apierrors.NewTimeoutError(fmt.Sprintf("Too large resource version: %d, current: %d", asked, current), 1)
	err.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: metav1.CauseTypeResourceVersionTooLarge, Message: "Too large resource version"}}
	return err
}

func (s *Server) sortedLocked() []*unstructured.Unstructured {
	keys := make([]string, 0, len(s.objs))
	for k := range s.objs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]*unstructured.Unstructured, len(keys))
	for i, k := range keys {
		out[i] = s.objs[k]
	}
	return out
}

// WatchWithContext serves a WATCH (E6-E9).
func (s *Server) WatchWithContext(_ context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, Request{Verb: "watch", Opts: opts, At: time.Now()})
	if len(s.failWatch) > 0 {
		err := s.failWatch[0]
		s.failWatch = s.failWatch[1:]
		if p, ok := err.(Panic); ok {
			panic(p.Value)
		}
		return nil, err
	}
	w := &serverWatch{ch: make(chan watch.Event, 100000), bookmarks: opts.AllowWatchBookmarks}
	w.stop = func() { s.forget(w) }
	s.watches = append(s.watches, w)
	initial := opts.SendInitialEvents != nil && *opts.SendInitialEvents
	if err := s.checkRVLocked(opts.ResourceVersion, "watch"); err != nil {
		status := apierrors.APIStatus(nil)
		status, _ = err.(apierrors.APIStatus)
		w.send(watch.Event{Type: watch.Error, Object: ptrStatus(status.Status())})
		w.close()
		s.watches = s.watches[:len(s.watches)-1]
		return w, nil
	}
	switch {
	case initial || opts.ResourceVersion == "" || opts.ResourceVersion == "0":
		for _, o := range s.sortedLocked() {
			if initial && s.LoseFromWatchList[objKey(o)] {
				continue
			}
			w.send(watch.Event{Type: watch.Added, Object: o.DeepCopy()})
		}
		if initial && opts.AllowWatchBookmarks && !s.SkipEndBookmark {
			w.send(watch.Event{Type: watch.Bookmark, Object: bookmarkObject(s.rev, true)})
		}
	default:
		from, _ := strconv.ParseInt(opts.ResourceVersion, 10, 64)
		for _, ev := range s.history {
			if ev.rev > from {
				w.send(watch.Event{Type: ev.typ, Object: ev.obj.DeepCopy()})
			}
		}
	}
	return w, nil
}

func ptrStatus(s metav1.Status) *metav1.Status { return &s }

func (s *Server) forget(w *serverWatch) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, x := range s.watches {
		if x == w {
			s.watches = append(s.watches[:i], s.watches[i+1:]...)
			break
		}
	}
	w.close()
}

func bookmarkObject(rev int64, initialEnd bool) *unstructured.Unstructured {
	b := &unstructured.Unstructured{}
	b.SetAPIVersion("v1")
	b.SetKind("Pod")
	b.SetResourceVersion(strconv.FormatInt(rev, 10))
	if initialEnd {
		b.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
	}
	return b
}

func objKey(o *unstructured.Unstructured) string {
	if o.GetNamespace() == "" {
		return o.GetName()
	}
	return o.GetNamespace() + "/" + o.GetName()
}

// serverWatch is one open watch: a buffered channel the server writes into.
type serverWatch struct {
	mu        sync.Mutex
	ch        chan watch.Event
	closed    bool
	bookmarks bool
	stop      func()
}

func (w *serverWatch) send(e watch.Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed {
		w.ch <- e
	}
}

func (w *serverWatch) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed {
		w.closed = true
		close(w.ch)
	}
}

// Stop implements watch.Interface.
func (w *serverWatch) Stop() { w.stop() }

// ResultChan implements watch.Interface.
func (w *serverWatch) ResultChan() <-chan watch.Event { return w.ch }
