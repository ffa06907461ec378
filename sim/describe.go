package sim

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/deltafifo"
	"github.com/cachelab/cachelab/sim/trace"
	"github.com/cachelab/cachelab/store"
)

// recorder collects one side's trace events as they happen; take hands
// over what a step produced.
type recorder struct {
	mu    sync.Mutex
	got   []trace.Event
	total int // events ever recorded
	// tamper, in tests only, alters what one side records, to prove that
	// the runner reports a difference.
	tamper func(*trace.Event)
}

// add records an event with only a layer, a kind and words.
func (r *recorder) add(layer string, kind trace.Kind, key, detail string) {
	r.record(trace.Event{Layer: layer, Kind: kind, Key: key, Detail: detail})
}

func (r *recorder) record(e trace.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.tamper != nil {
		r.tamper(&e)
	}
	r.got = append(r.got, e)
	r.total++
}

// count is how many events were ever recorded: settling counts a new one
// as progress.
func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.total
}

// peek returns the last n events the current step has recorded so far, as
// text, each cut to a screen's width: enough to see where a step got to,
// never megabytes.
func (r *recorder) peek(n int) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	got := r.got
	if len(got) > n {
		fmt.Fprintf(&b, "  ... %d earlier lines\n", len(got)-n)
		got = got[len(got)-n:]
	}
	for _, e := range got {
		fmt.Fprintf(&b, "  %-16s %s\n", e.Layer, clip(e.Text(), 120))
	}
	return b.String()
}

// clip cuts text to at most n runes, saying so.
func clip(text string, n int) string {
	if r := []rune(text); len(r) > n {
		return string(r[:n]) + " ..."
	}
	return text
}

// entries returns the events the current step has recorded so far,
// leaving them in place.
func (r *recorder) entries() []trace.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]trace.Event(nil), r.got...)
}

func (r *recorder) take() []trace.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.got
	r.got = nil
	return out
}

// arrange puts a step's events in layer order, each layer in the order it
// happened, after marking a watch-list's replayed objects as a batch whose
// order is free (trace.MarkListed).
func arrange(es []trace.Event) []trace.Event {
	es = append([]trace.Event(nil), es...)
	trace.MarkListed(es)
	return trace.Arrange(es)
}

func metaAccessor(obj any) (metav1.Object, error) { return meta.Accessor(obj) }

// keyOf is an object's namespace/name, or "" if it has none.
func keyOf(obj any) string {
	switch t := obj.(type) {
	case store.DeletedFinalStateUnknown:
		return t.Key
	case cache.DeletedFinalStateUnknown:
		return t.Key
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	if m.GetNamespace() == "" {
		return m.GetName()
	}
	return m.GetNamespace() + "/" + m.GetName()
}

// describe is how a trace names an object: namespace/name@resourceVersion,
// or the tombstone that stands for a delete the informer missed.
func describe(obj any) string {
	switch t := obj.(type) {
	case nil:
		return "<nil>"
	case store.DeletedFinalStateUnknown:
		return "DeletedFinalStateUnknown{" + t.Key + ", last seen " + describe(t.Obj) + "}"
	case cache.DeletedFinalStateUnknown:
		return "DeletedFinalStateUnknown{" + t.Key + ", last seen " + describe(t.Obj) + "}"
	case deltafifo.ReplacedAllInfo:
		return describeReplacedAll(t.ResourceVersion, t.Objects)
	case cache.ReplacedAllInfo:
		return describeReplacedAll(t.ResourceVersion, t.Objects)
	case deltafifo.SyncAllInfo, cache.SyncAllInfo:
		return "{every cached object}"
	case deltafifo.BookmarkInfo:
		return "{rv " + t.ResourceVersion + "}"
	case cache.BookmarkInfo:
		return "{rv " + t.ResourceVersion + "}"
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return fmt.Sprintf("%T", obj)
	}
	return keyOf(obj) + "@" + m.GetResourceVersion()
}

// describeReplacedAll names a relist's objects, sorted: the list may come
// from a map (a watch-list's temporary store).
func describeReplacedAll(rv string, objects []any) string {
	objs := make([]string, len(objects))
	for i, o := range objects {
		objs[i] = describe(o)
	}
	sort.Strings(objs)
	return fmt.Sprintf("{rv %s: %s}", rv, strings.Join(objs, " "))
}

// describeLong adds what a "show store" wants to see: labels, and
// managedFields if the object still has them.
func describeLong(obj any) string {
	s := describe(obj)
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return s
	}
	if l := u.GetLabels(); len(l) > 0 {
		keys := make([]string, 0, len(l))
		for k := range l {
			keys = append(keys, k+"="+l[k])
		}
		sort.Strings(keys)
		s += " labels=" + strings.Join(keys, ",")
	}
	if mf := u.GetManagedFields(); len(mf) > 0 {
		s += fmt.Sprintf(" managedFields=%d", len(mf))
	}
	return s
}

func describeEvent(ev watch.Event) string {
	switch ev.Type {
	case watch.Bookmark:
		rv := ""
		if m, err := meta.Accessor(ev.Object); err == nil {
			rv = m.GetResourceVersion()
		}
		if isInitialEventsEnd(ev.Object) {
			return "BOOKMARK rv " + rv + " (initial events end)"
		}
		return "BOOKMARK rv " + rv
	case watch.Error:
		if st, ok := ev.Object.(*metav1.Status); ok {
			return fmt.Sprintf("ERROR %d %s: %s", st.Code, st.Reason, st.Message)
		}
		return "ERROR " + fmt.Sprint(ev.Object)
	}
	return string(ev.Type) + " " + describe(ev.Object)
}

func describeListOptions(o metav1.ListOptions) string {
	var parts []string
	add := func(s string) { parts = append(parts, s) }
	if o.ResourceVersion == "" {
		add(`rv=""`)
	} else {
		add("rv=" + o.ResourceVersion)
	}
	if o.ResourceVersionMatch != "" {
		add("match=" + string(o.ResourceVersionMatch))
	}
	if o.Limit > 0 {
		add(fmt.Sprintf("limit=%d", o.Limit))
	}
	if o.Continue != "" {
		add("continue=<token>")
	}
	if o.LabelSelector != "" {
		add("labels=" + o.LabelSelector)
	}
	if o.FieldSelector != "" {
		add("fields=" + o.FieldSelector)
	}
	if o.SendInitialEvents != nil {
		add(fmt.Sprintf("sendInitialEvents=%t", *o.SendInitialEvents))
	}
	if o.AllowWatchBookmarks {
		add("bookmarks")
	}
	if t := o.TimeoutSeconds; t != nil {
		// Each reflector draws its watch timeout at random from [5m, 10m);
		// the trace shows the range so that it is the same on every run.
		if *t >= 300 && *t < 600 {
			add("timeout=[5m,10m)")
		} else {
			add(fmt.Sprintf("timeout=%ds", *t))
		}
	}
	return strings.Join(parts, " ")
}

func describeList(obj runtime.Object) (rv string, n int, cont string) {
	if l, err := meta.ListAccessor(obj); err == nil {
		rv = l.GetResourceVersion()
		if l.GetContinue() != "" {
			cont = " (more pages)"
		}
	}
	items, _ := meta.ExtractList(obj)
	return rv, len(items), cont
}

// objectEvent is an event about one object: its key, uid and
// resourceVersion filled in from obj (a tombstone gives its key only).
func objectEvent(layer string, kind trace.Kind, op string, obj any, detail string) trace.Event {
	e := trace.Event{Layer: layer, Kind: kind, Op: op, Key: keyOf(obj), Detail: detail}
	switch obj.(type) {
	case store.DeletedFinalStateUnknown, cache.DeletedFinalStateUnknown:
		e.Order = trace.OrderTombstones
		return e
	}
	if m, err := meta.Accessor(obj); err == nil {
		e.UID, e.RV = string(m.GetUID()), m.GetResourceVersion()
	}
	return e
}

// rvOf is obj's resourceVersion ("" without metadata).
func rvOf(obj any) string {
	if m, err := meta.Accessor(obj); err == nil {
		return m.GetResourceVersion()
	}
	return ""
}
