package difftest

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/store"
)

// Labels that make the shared test functions fail for an object.
const (
	// LabelTransformFails makes Transform return an error.
	LabelTransformFails = "transform-fails"
	// LabelTransformPanics makes Transform panic.
	LabelTransformPanics = "transform-panics"
	// LabelIndexFails makes IndexByApp return an error.
	LabelIndexFails = "index-fails"
	// LabelLookupFails makes Known.GetByKey return an error.
	LabelLookupFails = "lookup-fails"
	// LabelStoreFails makes a reflector world's store refuse the object
	// (Add, Update, Delete).
	LabelStoreFails = "store-fails"
	// LabelLookupMissing makes Known.GetByKey report the object as not
	// there (it vanished between ListKeys and GetByKey).
	LabelLookupMissing = "lookup-missing"
	// AnnotationTransformed counts how often Transform ran on an object,
	// so a double transform shows up in a comparison.
	AnnotationTransformed = "cachelab.test/transformed"
)

// ObjOption sets a field of a test object.
type ObjOption func(*unstructured.Unstructured)

// Pod builds a v1 Pod as *unstructured.Unstructured from a key "ns/name"
// (or "name" for a cluster-scoped object) and options.
func Pod(key string, opts ...ObjOption) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("Pod")
	if ns, name, ok := strings.Cut(key, "/"); ok {
		u.SetNamespace(ns)
		u.SetName(name)
	} else {
		u.SetName(key)
	}
	for _, o := range opts {
		o(u)
	}
	return u
}

// RV sets the resourceVersion.
func RV(rv int) ObjOption {
	return func(u *unstructured.Unstructured) { u.SetResourceVersion(strconv.Itoa(rv)) }
}

// UID sets the UID.
func UID(uid string) ObjOption {
	return func(u *unstructured.Unstructured) { u.SetUID(types.UID(uid)) }
}

// Label sets one label.
func Label(k, v string) ObjOption {
	return func(u *unstructured.Unstructured) {
		l := u.GetLabels()
		if l == nil {
			l = map[string]string{}
		}
		l[k] = v
		u.SetLabels(l)
	}
}

// BadObject is something a key function cannot key: it has no metadata.
type BadObject struct{ ID int }

// Transform is the transformer both sides share in tests. It never
// modifies its argument: it returns a copy whose annotation counts the
// transforms so far. It fails for objects labelled LabelTransformFails,
// and passes non-objects through untouched.
func Transform(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	if _, fail := u.GetLabels()[LabelTransformFails]; fail {
		return nil, fmt.Errorf("transform refused %s/%s", u.GetNamespace(), u.GetName())
	}
	if _, p := u.GetLabels()[LabelTransformPanics]; p {
		panic(fmt.Sprintf("transform: %s/%s", u.GetNamespace(), u.GetName()))
	}
	c := u.DeepCopy()
	a := c.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	n, _ := strconv.Atoi(a[AnnotationTransformed])
	a[AnnotationTransformed] = strconv.Itoa(n + 1)
	c.SetAnnotations(a)
	return c, nil
}

// IndexByApp indexes an object by its "app" label (no value if it has
// none). It fails for objects labelled LabelIndexFails and for objects
// without metadata.
func IndexByApp(obj any) ([]string, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("not an object: %T", obj)
	}
	l := u.GetLabels()
	if _, fail := l[LabelIndexFails]; fail {
		return nil, fmt.Errorf("index refused %s", u.GetName())
	}
	if app, ok := l["app"]; ok {
		return []string{app}, nil
	}
	return nil, nil
}

// IndexByLabelValues indexes an object under every one of its label
// values, sorted: an index function with many values per object.
func IndexByLabelValues(obj any) ([]string, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("not an object: %T", obj)
	}
	var out []string
	for _, v := range u.GetLabels() {
		out = append(out, v)
	}
	sort.Strings(out)
	return out, nil
}

// Bad returns a BadObject.
func Bad(id int) BadObject { return BadObject{ID: id} }

// Tomb is a side-neutral tombstone for scripts: each harness hands it to
// its implementation as that side's own DeletedFinalStateUnknown type.
type Tomb struct {
	Key string
	Obj any
}

// sideObj converts script values to one side's types.
func sideObj(obj any, clientGo bool) any {
	t, ok := obj.(Tomb)
	if !ok {
		return obj
	}
	if clientGo {
		return cache.DeletedFinalStateUnknown{Key: t.Key, Obj: t.Obj}
	}
	return store.DeletedFinalStateUnknown{Key: t.Key, Obj: t.Obj}
}

func sideList(list []any, clientGo bool) []any {
	out := make([]any, len(list))
	for i, o := range list {
		out[i] = sideObj(o, clientGo)
	}
	return out
}
