package recording

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"
)

// Server answers LISTs and WATCHes from a History, on a clock: at each
// moment it says what the recorded server had said by then, and a
// watch's events come at the moments they reached the recording
// informer. Whoever asks (cachelab's informer, client-go's) gets answers
// that depend on nothing but the request and the clock, so a replay is
// the same run after run.
//
// What it answers:
//   - LIST: the objects at the moment's resourceVersion (the newest
//     segment's snapshot and its changes so far), in pages if asked for a
//     limit; a continue token holds the page's resourceVersion.
//   - WATCH from resourceVersion R: the changes after R, those already
//     due at once and the rest at their moments; bookmarks if asked for.
//     From a resourceVersion older than the segment's snapshot, or older
//     than a recorded 410 that has come, 410 Gone.
//   - A watch-list (sendInitialEvents): an ADDED per object, then the
//     bookmark that ends the initial events, then as a WATCH.
//   - A watch ends cleanly at its timeoutSeconds; with the recorded
//     watch error at its moment; and with 410 Gone when a newer segment
//     begins, since what came between was never recorded.
type Server struct {
	h     *History
	clk   clock.Clock
	start time.Time // the clock's time at the recording's moment 0

	mu      sync.Mutex
	watches map[*scriptWatch]struct{}
}

// NewServer returns a Server for h whose moment 0 is clk's now.
func NewServer(h *History, clk clock.Clock) *Server {
	return &Server{h: h, clk: clk, start: clk.Now(), watches: map[*scriptWatch]struct{}{}}
}

// Now is the recording's moment the clock is at.
func (s *Server) Now() time.Duration { return s.clk.Since(s.start) }

// RV is the resourceVersion an informer that has had everything the
// server has said by now has reached.
func (s *Server) RV() int64 {
	now := s.Now()
	_, seg := s.h.SegmentAt(now)
	_, rv := seg.StateAt(now)
	return rv
}

// IsWatchListSemanticsUnSupported is false: a kube-apiserver answers a
// watch-list, and so does a replay of one.
func (s *Server) IsWatchListSemanticsUnSupported() bool { return false }

// ListWithContext answers a LIST (see Server).
func (s *Server) ListWithContext(_ context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	now := s.Now()
	_, seg := s.h.SegmentAt(now)
	objs, rv := seg.StateAt(now)
	offset := 0
	if opts.Continue != "" {
		var err error
		if rv, offset, err = parseContinue(opts.Continue); err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		var ok bool
		if objs, ok = s.h.StateAtRV(rv); !ok {
			return nil, apierrors.NewResourceExpired("the continue token's resourceVersion is older than the recording")
		}
	}
	keys := slices.Sorted(maps.Keys(objs))
	keys = keys[min(offset, len(keys)):]
	list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "PodList"}}
	list.SetResourceVersion(strconv.FormatInt(rv, 10))
	if opts.Limit > 0 && opts.ResourceVersion != "0" && int64(len(keys)) > opts.Limit {
		keys = keys[:opts.Limit]
		list.SetContinue(fmt.Sprintf("%d/%d", rv, offset+len(keys)))
	}
	for _, k := range keys {
		list.Items = append(list.Items, *s.object(objs[k]))
	}
	return list, nil
}

func parseContinue(token string) (rv int64, offset int, err error) {
	a, b, ok := strings.Cut(token, "/")
	if ok {
		if rv, err = strconv.ParseInt(a, 10, 64); err == nil {
			offset, err = strconv.Atoi(b)
		}
	}
	if !ok || err != nil || offset < 0 {
		return 0, 0, fmt.Errorf("continue token %q is not one this replay gave", token)
	}
	return rv, offset, nil
}

// object is a recorded object as a server's answer: a copy, of the
// recorded resource's kind if it names none.
func (s *Server) object(m map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(m)}
	if u.GetKind() == "" {
		u.SetGroupVersionKind(s.h.Resource.GroupVersionKind())
	}
	return u
}

// WatchWithContext answers a WATCH (see Server).
func (s *Server) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	now := s.Now()
	i, seg := s.h.SegmentAt(now)
	w := &scriptWatch{s: s, ctx: ctx, seg: i, out: make(chan watch.Event), stop: make(chan struct{}),
		bookmarks: opts.AllowWatchBookmarks, began: now, deadline: -1}
	if opts.TimeoutSeconds != nil && *opts.TimeoutSeconds > 0 {
		w.deadline = now + time.Duration(*opts.TimeoutSeconds)*time.Second
	}
	switch {
	case opts.SendInitialEvents != nil && *opts.SendInitialEvents:
		objs, rv := seg.StateAt(now)
		for _, k := range slices.Sorted(maps.Keys(objs)) {
			w.first = append(w.first, watch.Event{Type: watch.Added, Object: s.object(objs[k])})
		}
		w.first = append(w.first, s.bookmark(rv, true))
		w.from = rv
	default:
		from, err := strconv.ParseInt(opts.ResourceVersion, 10, 64)
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("a replay watches from a resourceVersion of the recording; got %q", opts.ResourceVersion))
		}
		w.from = from
		if why := seg.tooOld(from, now); why != "" {
			w.first, w.ended = []watch.Event{gone(why)}, true
		}
	}
	s.mu.Lock()
	s.watches[w] = struct{}{}
	s.mu.Unlock()
	go w.run()
	return w, nil
}

// tooOld says why a watch of the segment from resourceVersion from,
// started at t, cannot be served, or "": from is before the segment's
// snapshot, or before the moment a 410 the recorded informer got has
// come by t (what came before it the server no longer has; a LIST
// after it is at its resourceVersion, and a watch from there is served).
func (seg *Segment) tooOld(from int64, t time.Duration) string {
	if from < seg.RV {
		return fmt.Sprintf("too old resource version: %d (%d)", from, seg.RV)
	}
	for _, e := range seg.Errors {
		if e.Code != http.StatusGone || e.At > t {
			continue
		}
		if _, rv := seg.StateAt(e.At); from < rv {
			return fmt.Sprintf("too old resource version: %d (%d: the recorded watch expired at %v)", from, rv, e.At)
		}
	}
	return ""
}

// bookmark is a BOOKMARK at rv, of the recorded resource's kind, as a
// server sends one: the end of a watch-list's initial events if
// initialEnd. (A bookmark of another kind is one a reflector drops:
// client-go's checks each event's kind against the informer's.)
func (s *Server) bookmark(rv int64, initialEnd bool) watch.Event {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(s.h.Resource.GroupVersionKind())
	u.SetResourceVersion(strconv.FormatInt(rv, 10))
	if initialEnd {
		u.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
	}
	return watch.Event{Type: watch.Bookmark, Object: u}
}

func gone(why string) watch.Event {
	st := apierrors.NewResourceExpired(why).Status()
	return watch.Event{Type: watch.Error, Object: &st}
}

// Quiet reports whether every open watch has sent all that is due by
// now, and waits for a later moment: what the server has to say at this
// moment has all been taken by its readers.
func (s *Server) Quiet() bool {
	now := s.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for w := range s.watches {
		if !w.quiet(now) {
			return false
		}
	}
	return true
}
