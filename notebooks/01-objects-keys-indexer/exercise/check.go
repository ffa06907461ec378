package exercise

import (
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/notebooks/internal/lab"
)

// Impl is a solution to check: yours (KeyFunc, AppIndex) or the
// reference.
type Impl struct {
	KeyFunc  func(any) (string, error)
	AppIndex func(any) ([]string, error)
}

// Yours is the code in this package.
var Yours = Impl{KeyFunc: KeyFunc, AppIndex: AppIndex}

// Checks are the behaviours the lab checks, each against client-go:
// the key function against cache.MetaNamespaceKeyFunc, object by object,
// and the index function through a real client-go Indexer, whose answers
// must match those it gives with the reference index function.
func Checks(impl Impl, reference Impl) []lab.Check {
	return []lab.Check{
		{ID: "S1", Behaviour: "key of a namespaced object", Run: func() error {
			return sameKey(impl, obj("shop", "web-1", nil))
		}},
		{ID: "S1", Behaviour: "key of a cluster-scoped object", Run: func() error {
			return sameKey(impl, obj("", "node-a", nil))
		}},
		{ID: "S1", Behaviour: "an ExplicitKey is its own key", Run: func() error {
			return sameKey(impl, cache.ExplicitKey("shop/anything"))
		}},
		{ID: "S1", Behaviour: "no metadata: an error", Run: func() error {
			return sameKey(impl, struct{ Name string }{"x"})
		}},
		{ID: "S1", Behaviour: "a cache keyed by your function", Run: func() error {
			return sameCache(impl)
		}},
		{ID: "S3", Behaviour: "index buckets after adds, updates, deletes", Run: func() error {
			return sameIndex(impl, reference)
		}},
	}
}

func obj(ns, name string, labels map[string]string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}}
}

func sameKey(impl Impl, o any) error {
	want, wantErr := cache.MetaNamespaceKeyFunc(o)
	got, err := impl.KeyFunc(o)
	switch {
	case wantErr != nil && err == nil:
		return fmt.Errorf("for %s client-go returns an error (%v); yours returned the key %q", describe(o), wantErr, got)
	case wantErr == nil && err != nil:
		return fmt.Errorf("for %s client-go returns the key %q; yours returned the error %q", describe(o), want, err)
	case got != want:
		return fmt.Errorf("for %s client-go returns the key %q; yours returned %q", describe(o), want, got)
	}
	return nil
}

// sameCache stores the same objects in a client-go Store keyed by your
// function and in one keyed by client-go's, and compares their keys.
func sameCache(impl Impl) error {
	yours := cache.NewStore(impl.KeyFunc)
	theirs := cache.NewStore(cache.MetaNamespaceKeyFunc)
	for _, o := range []any{obj("shop", "a", nil), obj("lab", "a", nil), obj("", "a", nil)} {
		if err := yours.Add(o); err != nil {
			_, why := impl.KeyFunc(o)
			return fmt.Errorf("client-go's store could not add %s: your KeyFunc returned the error %q", describe(o), why)
		}
		_ = theirs.Add(o)
	}
	got, want := yours.ListKeys(), theirs.ListKeys()
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		return fmt.Errorf("three objects named a (in shop, in lab, cluster-scoped): client-go's store holds %q; yours %q", want, got)
	}
	return nil
}

// sameIndex drives two client-go indexers through the same writes, one
// with your index function and one with the reference, and compares what
// each index holds after every write.
func sameIndex(impl, reference Impl) (err error) {
	defer func() {
		// client-go's indexer panics when an index function fails.
		if r := recover(); r != nil {
			err = fmt.Errorf("client-go's indexer panicked on an error from your AppIndex: %v", r)
		}
	}()
	yours := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{"app": impl.AppIndex})
	theirs := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{"app": reference.AppIndex})
	steps := []struct {
		what string
		do   func(cache.Indexer) error
	}{
		{"add shop/web-1 (app=web)", func(i cache.Indexer) error { return i.Add(obj("shop", "web-1", map[string]string{"app": "web"})) }},
		{"add shop/web-2 (app=web)", func(i cache.Indexer) error { return i.Add(obj("shop", "web-2", map[string]string{"app": "web"})) }},
		{"add shop/job (no app label)", func(i cache.Indexer) error { return i.Add(obj("shop", "job", map[string]string{"team": "x"})) }},
		{"update shop/web-2 to app=db", func(i cache.Indexer) error { return i.Update(obj("shop", "web-2", map[string]string{"app": "db"})) }},
		{"delete shop/web-1", func(i cache.Indexer) error { return i.Delete(obj("shop", "web-1", map[string]string{"app": "web"})) }},
	}
	for _, st := range steps {
		if err := st.do(yours); err != nil {
			return fmt.Errorf("after %q, client-go's indexer reported an error from your index function: %v", st.what, err)
		}
		_ = st.do(theirs)
		if got, want := buckets(yours), buckets(theirs); got != want {
			return fmt.Errorf("after %q the index should hold %s; with yours it holds %s", st.what, want, got)
		}
	}
	return nil
}

func buckets(i cache.Indexer) string {
	values := i.ListIndexFuncValues("app")
	sort.Strings(values)
	var parts []string
	for _, v := range values {
		keys, _ := i.IndexKeys("app", v)
		if len(keys) == 0 {
			continue
		}
		sort.Strings(keys)
		parts = append(parts, fmt.Sprintf("app=%s: %v", v, keys))
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, "; ")
}

func describe(o any) string {
	switch t := o.(type) {
	case *metav1.PartialObjectMetadata:
		if t.Namespace == "" {
			return fmt.Sprintf("a cluster-scoped object named %q", t.Name)
		}
		return fmt.Sprintf("an object %q in namespace %q", t.Name, t.Namespace)
	case cache.ExplicitKey:
		return fmt.Sprintf("cache.ExplicitKey(%q)", string(t))
	}
	return fmt.Sprintf("a %T (no metadata)", o)
}
