package recording

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cachelab/cachelab/listwatch"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A History is what the server told the recording informer, arranged as
// a server can answer from it: a run of segments, each a snapshot (a
// LIST's pages, or a watch-list's initial events, at one
// resourceVersion) and the changes that came after it on the watches
// that followed, each at the moment it reached the informer.
//
//	segment 1: snapshot @4000 (at 0s) ── ADDED a@4005 (1.2s) ── MODIFIED a@4010 (3s) ── 410 (4s)
//	segment 2: snapshot @4890 (at 5.1s) ── DELETED a@4900 (9s) ...
//
// Between two segments the history has a gap: what the server wrote in
// between never reached the informer (its watch had expired, or broken,
// and it listed again). A server replaying the history says so the only
// way a server can: a watch of the older segment ends with 410 Gone once
// the newer one begins, and the informer lists again.
type History struct {
	// Resource is what the session recorded (its session line's).
	Resource listwatch.Resource
	Segments []*Segment
	// Failed are the LISTs and WATCHes that failed (a status the client
	// did not retry away, or a broken connection), in order.
	Failed []Failure
}

// Segment is a snapshot and the changes after it.
type Segment struct {
	At      time.Duration // when the snapshot was complete
	RV      int64
	Objects map[string]map[string]any // key -> object at RV
	Changes []Change
	// Errors are the watch errors the informer got while the segment
	// was the newest, at their moments: each ends the open watches. A
	// 410 among them expires the segment: no watch of it can start
	// after it.
	Errors []WatchError
}

// Change is a watch event of a segment: ADDED, MODIFIED, DELETED or
// BOOKMARK (Object nil but for its resourceVersion).
type Change struct {
	At     time.Duration
	Type   string
	RV     int64
	Key    string
	Object map[string]any
}

// WatchError is an ERROR event the informer got, with its Status.
type WatchError struct {
	At     time.Duration
	Code   int
	Status map[string]any
}

// Failure is a LIST or WATCH that got an error in place of an answer.
type Failure struct {
	At   time.Duration
	Verb string // "list" or "watch"
	Code int    // the status's code, 0 for an error without one
	Text string
	Line int // its index in Session.Lines
}

// NewHistory arranges a session's lines as a History. A session whose
// informer never completed a LIST or a watch-list has none to replay: it
// is an error, as is a resourceVersion that is not a number (every
// kube-apiserver backed by etcd gives numbers, and the replay compares
// them).
func NewHistory(s *Session) (*History, error) {
	h := &History{Resource: listwatch.Pods}
	if res, ok := ResourceNamed(s.Header.Resource); ok {
		h.Resource = res
	}
	var pending *snapshot          // a LIST's pages so far
	initial := map[int]*snapshot{} // a watch-list's initial events so far, by watch
	for i, l := range s.Lines {
		if err := h.take(l, i, &pending, initial); err != nil {
			return nil, fmt.Errorf("%s: %v", s.Pos(i), err)
		}
	}
	if len(h.Segments) == 0 {
		return nil, fmt.Errorf("%s: the recording has no complete LIST or watch-list: nothing to replay", s.File)
	}
	h.Segments[0].At = 0 // the replay starts with the informer, at 0
	return h, nil
}

type snapshot struct {
	rv      int64
	objects map[string]map[string]any
}

// Resolution is the precision of a replay's moments: a session's times
// are rounded to it, so that a replay's steps land on them exactly.
const Resolution = time.Millisecond

func (h *History) take(l Line, i int, pending **snapshot, initial map[int]*snapshot) error {
	at := time.Duration(l.At).Round(Resolution)
	switch l.Kind {
	case KindList:
		if l.Error != "" {
			*pending = nil
			h.Failed = append(h.Failed, failure(at, "list", l.Error, i))
			return nil
		}
		if l.Continue == "" {
			rv, err := parseRV(l.ListRV, "the list's")
			if err != nil {
				return err
			}
			*pending = &snapshot{rv: rv, objects: map[string]map[string]any{}}
		}
		if *pending == nil {
			return nil // a continued page of a list whose first page failed
		}
		for _, it := range l.Items {
			(*pending).objects[keyOf(it)] = it
		}
		if l.NextContinue == "" {
			h.Segments = append(h.Segments, &Segment{At: at, RV: (*pending).rv, Objects: (*pending).objects})
			*pending = nil
		}
	case KindWatch:
		if l.Error != "" {
			h.Failed = append(h.Failed, failure(at, "watch", l.Error, i))
		} else if l.SendInitialEvents {
			initial[l.Watch] = &snapshot{objects: map[string]map[string]any{}}
		}
	case KindWatchEnd:
		delete(initial, l.Watch)
	case KindEvent:
		return h.event(l, at, initial)
	}
	return nil
}

func (h *History) event(l Line, at time.Duration, initial map[int]*snapshot) error {
	if l.Type == "ERROR" {
		delete(initial, l.Watch)
		if seg := h.last(); seg != nil {
			seg.Errors = append(seg.Errors, WatchError{At: at, Code: statusCode(l.Object), Status: l.Object})
		}
		return nil
	}
	u := unstructured.Unstructured{Object: l.Object}
	rv, err := parseRV(u.GetResourceVersion(), "the event's")
	if err != nil {
		return err
	}
	if snap, ok := initial[l.Watch]; ok {
		switch {
		case l.Type == "ADDED":
			snap.objects[keyOf(l.Object)] = l.Object
		case l.Type == "BOOKMARK" && u.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true":
			h.Segments = append(h.Segments, &Segment{At: at, RV: rv, Objects: snap.objects})
			delete(initial, l.Watch)
		}
		return nil
	}
	seg := h.last()
	if seg == nil {
		return nil // a watch before any list: nothing to start from
	}
	c := Change{At: at, Type: l.Type, RV: rv}
	if l.Type != "BOOKMARK" {
		c.Key, c.Object = keyOf(l.Object), l.Object
	}
	seg.Changes = append(seg.Changes, c)
	return nil
}

func (h *History) last() *Segment {
	if len(h.Segments) == 0 {
		return nil
	}
	return h.Segments[len(h.Segments)-1]
}

func failure(at time.Duration, verb, text string, i int) Failure {
	code, _ := strconv.Atoi(strings.SplitN(text, " ", 2)[0])
	return Failure{At: at, Verb: verb, Code: code, Text: text, Line: i}
}

func statusCode(status map[string]any) int {
	switch c := status["code"].(type) {
	case float64:
		return int(c)
	case int64:
		return int(c)
	case int:
		return c
	}
	return 0
}

func parseRV(rv, whose string) (int64, error) {
	n, err := strconv.ParseInt(rv, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s resourceVersion %q is not a number: cachelab replays sessions from servers backed by etcd, whose resourceVersions are", whose, rv)
	}
	return n, nil
}

func keyOf(obj map[string]any) string {
	u := unstructured.Unstructured{Object: obj}
	if ns := u.GetNamespace(); ns != "" {
		return ns + "/" + u.GetName()
	}
	return u.GetName()
}

// SegmentAt is the segment a server answers from at t: the newest whose
// snapshot was complete by then (the first, before that), and its index.
func (h *History) SegmentAt(t time.Duration) (int, *Segment) {
	i := 0
	for j, s := range h.Segments {
		if s.At <= t {
			i = j
		}
	}
	return i, h.Segments[i]
}

// StateAt is segment seg's objects and resourceVersion once every change
// up to t has been applied.
func (seg *Segment) StateAt(t time.Duration) (map[string]map[string]any, int64) {
	objs := maps.Clone(seg.Objects)
	rv := seg.RV
	for _, c := range seg.Changes {
		if c.At > t {
			break
		}
		apply(objs, c)
		rv = max(rv, c.RV)
	}
	return objs, rv
}

// StateAtRV is the objects at resourceVersion rv, if a segment holds it:
// from its snapshot up to its changes at rv.
func (h *History) StateAtRV(rv int64) (map[string]map[string]any, bool) {
	for i := len(h.Segments) - 1; i >= 0; i-- {
		seg := h.Segments[i]
		if rv < seg.RV {
			continue
		}
		objs := maps.Clone(seg.Objects)
		for _, c := range seg.Changes {
			if c.RV > rv {
				break
			}
			apply(objs, c)
		}
		return objs, true
	}
	return nil, false
}

func apply(objs map[string]map[string]any, c Change) {
	switch c.Type {
	case "ADDED", "MODIFIED":
		objs[c.Key] = c.Object
	case "DELETED":
		delete(objs, c.Key)
	}
}

// Moments are the moments at which the server has something new to
// say: a change, a watch error, a new segment; sorted, each once.
func (h *History) Moments() []time.Duration {
	var out []time.Duration
	for _, seg := range h.Segments {
		out = append(out, seg.At)
		for _, c := range seg.Changes {
			out = append(out, c.At)
		}
		for _, e := range seg.Errors {
			out = append(out, e.At)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
