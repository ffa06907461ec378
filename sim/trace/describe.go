package trace

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cachelab/cachelab/deltafifo"
	"github.com/cachelab/cachelab/store"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// KeyOf is an object's namespace/name, or "" if it has none.
func KeyOf(obj any) string {
	switch t := obj.(type) {
	case store.DeletedFinalStateUnknown:
		return t.Key
	case cache.DeletedFinalStateUnknown:
		return t.Key
	}
	if u, ok := obj.(*unstructured.Unstructured); ok {
		ns, name, _ := metadataOf(u)
		return joinKey(ns, name)
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	return joinKey(m.GetNamespace(), m.GetName())
}

func joinKey(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

// KeyAndDescribe is KeyOf and Describe of one object, reading its
// metadata once: a snapshot of 100,000 objects calls it for each.
func KeyAndDescribe(obj any) (key, desc string) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		ns, name, rv := metadataOf(u)
		key = joinKey(ns, name)
		return key, key + "@" + rv
	}
	return KeyOf(obj), Describe(obj)
}

// metadataOf reads what Unstructured's GetNamespace, GetName and
// GetResourceVersion do ("" where a field is missing or not a string),
// with one lookup of metadata instead of one per field: snapshots read
// them for every object of a large indexer.
func metadataOf(u *unstructured.Unstructured) (ns, name, rv string) {
	m, _ := u.Object["metadata"].(map[string]any)
	ns, _ = m["namespace"].(string)
	name, _ = m["name"].(string)
	rv, _ = m["resourceVersion"].(string)
	return ns, name, rv
}

// UnstructuredRV is u's resourceVersion, as GetResourceVersion reads
// it, without allocating.
func UnstructuredRV(u *unstructured.Unstructured) string {
	_, _, rv := metadataOf(u)
	return rv
}

// Describe is how a trace names an object: namespace/name@resourceVersion,
// or the tombstone that stands for a delete the informer missed.
func Describe(obj any) string {
	switch t := obj.(type) {
	case nil:
		return "<nil>"
	case store.DeletedFinalStateUnknown:
		return "DeletedFinalStateUnknown{" + t.Key + ", last seen " + Describe(t.Obj) + "}"
	case cache.DeletedFinalStateUnknown:
		return "DeletedFinalStateUnknown{" + t.Key + ", last seen " + Describe(t.Obj) + "}"
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
	if u, ok := obj.(*unstructured.Unstructured); ok {
		ns, name, rv := metadataOf(u)
		return joinKey(ns, name) + "@" + rv
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return fmt.Sprintf("%T", obj)
	}
	return KeyOf(obj) + "@" + m.GetResourceVersion()
}

// describeReplacedAll names a relist's objects, sorted: the list may come
// from a map (a watch-list's temporary store).
func describeReplacedAll(rv string, objects []any) string {
	objs := make([]string, len(objects))
	for i, o := range objects {
		objs[i] = Describe(o)
	}
	sort.Strings(objs)
	return fmt.Sprintf("{rv %s: %s}", rv, strings.Join(objs, " "))
}

// DescribeLong adds what a "show store" wants to see: labels, and
// managedFields if the object still has them.
func DescribeLong(obj any) string {
	s := Describe(obj)
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
	return s + describeMeta(u) + describeKind(u)
}

// describeMeta is what DescribeLong shows of an object's life beyond its
// labels, where it has any: its finalizers, its deletionTimestamp once a
// delete has marked it (E18), and its owners (E19).
func describeMeta(u *unstructured.Unstructured) string {
	out := ""
	if g := u.GetGeneration(); g > 0 {
		out += fmt.Sprintf(" generation=%d", g)
	}
	if f := u.GetFinalizers(); len(f) > 0 {
		out += " finalizers=" + strings.Join(f, ",")
	}
	if ts := u.GetDeletionTimestamp(); ts != nil {
		out += " deletionTimestamp=" + ts.UTC().Format(time.RFC3339)
	}
	for _, o := range u.GetOwnerReferences() {
		out += " owner=" + o.Kind + "/" + o.Name
	}
	return out
}

// describeKind is what DescribeLong shows of the fields of a kind other
// than Pod: a ConfigMap's data, a Secret's keys and sizes (its values
// stay out of a trace, as kubectl describe keeps them out), a
// Deployment's replicas and image.
func describeKind(u *unstructured.Unstructured) string {
	switch u.GetKind() {
	case "ConfigMap", "Secret":
		data, _, _ := unstructured.NestedMap(u.Object, "data")
		if len(data) == 0 {
			return ""
		}
		pairs := make([]string, 0, len(data))
		for k, v := range data {
			s, _ := v.(string)
			if u.GetKind() == "Secret" {
				b, err := base64.StdEncoding.DecodeString(s)
				if err != nil {
					pairs = append(pairs, k+"=<not base64>")
					continue
				}
				pairs = append(pairs, fmt.Sprintf("%s=<%d bytes>", k, len(b)))
				continue
			}
			pairs = append(pairs, k+"="+s)
		}
		sort.Strings(pairs)
		return " data=" + strings.Join(pairs, ",")
	case "Deployment":
		out := ""
		if n, ok, _ := unstructured.NestedInt64(u.Object, "spec", "replicas"); ok {
			out += fmt.Sprintf(" replicas=%d", n)
		}
		if cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers"); len(cs) > 0 {
			if c, ok := cs[0].(map[string]any); ok {
				if img, ok := c["image"].(string); ok {
					out += " image=" + img
				}
			}
		}
		return out
	case "Pod":
		return ""
	}
	return describeSpec(u)
}

// describeSpec is what DescribeLong shows of a custom resource: its
// spec's fields, sorted, each a value as JSON writes it.
func describeSpec(u *unstructured.Unstructured) string {
	spec, _, _ := unstructured.NestedMap(u.Object, "spec")
	if len(spec) == 0 {
		return ""
	}
	pairs := make([]string, 0, len(spec))
	for k, v := range spec {
		b, err := json.Marshal(v)
		if err != nil {
			b = []byte(fmt.Sprint(v))
		}
		pairs = append(pairs, k+"="+strings.Trim(string(b), `"`))
	}
	sort.Strings(pairs)
	return " spec=(" + strings.Join(pairs, ",") + ")"
}

func DescribeEvent(ev watch.Event) string {
	switch ev.Type {
	case watch.Bookmark:
		rv := ""
		if m, err := meta.Accessor(ev.Object); err == nil {
			rv = m.GetResourceVersion()
		}
		if IsInitialEventsEnd(ev.Object) {
			return "BOOKMARK rv " + rv + InitialEventsEndMark
		}
		return "BOOKMARK rv " + rv
	case watch.Error:
		if st, ok := ev.Object.(*metav1.Status); ok {
			return fmt.Sprintf("ERROR %d %s: %s", st.Code, st.Reason, st.Message)
		}
		return "ERROR " + fmt.Sprint(ev.Object)
	}
	return string(ev.Type) + " " + Describe(ev.Object)
}

func DescribeListOptions(o metav1.ListOptions) string {
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

func DescribeList(obj runtime.Object) (rv string, n int, cont string) {
	if l, err := meta.ListAccessor(obj); err == nil {
		rv = l.GetResourceVersion()
		if l.GetContinue() != "" {
			cont = MorePagesMark
		}
	}
	items, _ := meta.ExtractList(obj)
	return rv, len(items), cont
}

// ObjectEvent is an event about one object: its key, uid and
// resourceVersion filled in from obj (a tombstone gives its key only).
func ObjectEvent(layer string, kind Kind, op string, obj any, detail string) Event {
	e := Event{Layer: layer, Kind: kind, Op: op, Key: KeyOf(obj), Detail: detail}
	switch obj.(type) {
	case store.DeletedFinalStateUnknown, cache.DeletedFinalStateUnknown:
		e.Order = OrderTombstones
		return e
	}
	if m, err := meta.Accessor(obj); err == nil {
		e.UID, e.RV = string(m.GetUID()), m.GetResourceVersion()
	}
	return e
}

// RVOf is obj's resourceVersion ("" without metadata).
func RVOf(obj any) string {
	if m, err := meta.Accessor(obj); err == nil {
		return m.GetResourceVersion()
	}
	return ""
}

// IsInitialEventsEnd reports whether a bookmark is the one that ends a
// watch-list's initial events.
func IsInitialEventsEnd(obj runtime.Object) bool {
	m, err := meta.Accessor(obj)
	return err == nil && m.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true"
}
