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
	"github.com/cachelab/cachelab/store"
)

// The layers of a trace, in the order a change travels through them. Each
// trace line belongs to one. The layers marked "both" are recorded the
// same way for cachelab and client-go and compared after every step; the
// others exist only in cachelab, whose insides are open.
const (
	layerEtcd      = "etcd"      // the world: writes, compactions, progress, restarts
	layerSim       = "sim"       // the simulator's own levers: the connection, the clock, pausing
	layerLog       = "log"       // both: what the informer logged about a handler (resync period changes)
	layerRequest   = "request"   // both: LIST and WATCH requests and their answers
	layerWatch     = "watch"     // both: watch events as the reflector takes them
	layerReflector = "reflector" // cachelab: replace, resync, backoff, watch endings
	layerQueue     = "transform" // both: objects entering the queue, as the transform sees them
	layerPop       = "pop"       // cachelab: deltas popped for processing
	layerIndexer   = "indexer"   // both: what the step changed in the indexer
	layerHandler   = "handler"   // both: each handler's calls (the layer is "handler/<name>")
	layerSynced    = "synced"    // both: HasSynced turning true
	layerShow      = "show"      // a show command's output
	layerQueueLen  = "queue"     // cachelab: what its queue holds (client-go's cannot be seen)
	layerNote      = "note"      // invariant notes and explanations
)

// compared reports whether a layer is recorded on both sides and compared.
func compared(layer string, queueWorld bool) bool {
	switch layer {
	case layerLog, layerRequest, layerWatch, layerQueue, layerIndexer, layerSynced, layerShow:
		return true
	case layerPop:
		return queueWorld // in the queue world the simulator pops both queues
	}
	return strings.HasPrefix(layer, layerHandler+"/")
}

// layerRank orders layers in a step's output: the order a change travels.
func layerRank(layer string) int {
	order := []string{layerEtcd, layerSim, layerLog, layerRequest, layerWatch, layerReflector, layerQueue, layerPop, layerIndexer, layerHandler, layerSynced, layerShow, layerQueueLen, layerNote}
	base, _, _ := strings.Cut(layer, "/")
	for i, l := range order {
		if l == base {
			return i
		}
	}
	return len(order)
}

// entry is one recorded trace line before it is placed in a step.
type entry struct {
	layer, key, text string
	// unordered marks a line that comes in map order on its side (a held
	// handler's initial-list call, named on release): its step's lines
	// are sorted by key.
	unordered bool
}

// recorder collects one side's trace lines as they happen; take hands
// over what a step produced.
type recorder struct {
	mu    sync.Mutex
	got   []entry
	total int // lines ever recorded
	// tamper, in tests only, alters what one side records, to prove that
	// the runner reports a difference.
	tamper func(*entry)
}

func (r *recorder) add(layer, key, text string) { r.record(entry{layer: layer, key: key, text: text}) }

// addUnordered records a line that comes in map order (entry.unordered).
func (r *recorder) addUnordered(layer, key, text string) {
	r.record(entry{layer: layer, key: key, text: text, unordered: true})
}

func (r *recorder) record(e entry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.tamper != nil {
		r.tamper(&e)
	}
	r.got = append(r.got, e)
	r.total++
}

// count is how many lines were ever recorded: settling counts a new line
// as progress.
func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.total
}

// peek returns the last n lines the current step has recorded so far, as
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
		fmt.Fprintf(&b, "  %-16s %s\n", e.layer, clip(e.text, 120))
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

// entries returns the lines the current step has recorded so far,
// leaving them in place.
func (r *recorder) entries() []entry {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]entry(nil), r.got...)
}

func (r *recorder) take() []entry {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.got
	r.got = nil
	return out
}

// anyMapOrdered reports whether some of a step's entries show that the
// step's lines come in map order: a relist or a watch-list (the LIST or
// WATCH-LIST request, its items, the Replace, the initial events' end),
// or a line recorded as unordered.
func anyMapOrdered(es []entry) bool {
	for _, e := range es {
		if e.layer == layerReflector && strings.HasPrefix(e.text, "replace:") || e.layer == layerWatch && strings.HasSuffix(e.text, "(initial events end)") ||
			e.layer == layerRequest && (strings.HasPrefix(e.text, "LIST") || strings.Contains(e.text, " WATCH-LIST ") || strings.Contains(e.text, " items, rv ")) ||
			e.unordered {
			return true
		}
	}
	return false
}

// arrange puts a step's entries in layer order. Within a layer the order
// is the order things happened, except in a step where an implementation
// iterates a map (a relist, a resync, a watch-list's initial list, a late
// handler's adds): there the lines are sorted by object key, keeping each
// key's own lines in order, so the trace is the same on every run.
func arrange(es []entry, mapOrder bool) []entry {
	out := append([]entry(nil), es...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if ra, rb := layerRank(a.layer), layerRank(b.layer); ra != rb {
			return ra < rb
		}
		if a.layer != b.layer {
			return a.layer < b.layer
		}
		if a.layer == layerReflector {
			// A resync tick and a watch's end can come at the same
			// scenario instant (a clock jump past both), on two of the
			// reflector's goroutines: the resync is put first.
			if ra, rb := strings.HasPrefix(a.text, "resync"), strings.HasPrefix(b.text, "resync"); ra != rb {
				return ra
			}
		}
		if mapOrder && a.layer != layerRequest && a.layer != layerWatch && a.layer != layerReflector && a.layer != layerShow {
			return a.key < b.key
		}
		return false
	})
	return out
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
