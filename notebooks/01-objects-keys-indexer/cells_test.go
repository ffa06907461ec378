package objects_test

import (
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/store"
)

// pod is a metadata-only object, as a metadata informer caches.
func pod(ns, name, rv string, labels map[string]string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Namespace: ns, Name: name, ResourceVersion: rv, Labels: labels}}
}

// byApp is an index function: the values of the "app" label.
func byApp(obj any) ([]string, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	if app, ok := m.GetLabels()["app"]; ok {
		return []string{app}, nil
	}
	return nil, nil
}

// Every object in an informer's cache has a key: "namespace/name", or just
// "name" for a cluster-scoped object. cachelab's key function and
// client-go's agree.
func ExampleMetaNamespaceKeyFunc() {
	objects := []any{
		pod("shop", "web-1", "7", nil),
		&metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}},
		"not an object",
	}
	for _, obj := range objects {
		key, err := store.MetaNamespaceKeyFunc(obj)
		cgKey, cgErr := cache.MetaNamespaceKeyFunc(obj)
		same := key == cgKey && (err == nil) == (cgErr == nil)
		fmt.Printf("key %-12q error %-5t same as client-go: %t\n", key, err != nil, same)
	}
	ns, name, _ := store.SplitMetaNamespaceKey("shop/web-1")
	fmt.Printf("split: namespace %q, name %q\n", ns, name)
	// Output:
	// key "shop/web-1" error false same as client-go: true
	// key "node-a"     error false same as client-go: true
	// key ""           error true  same as client-go: true
	// split: namespace "shop", name "web-1"
}

// An indexer is a store plus indices: an index function maps an object to
// values, and the indexer keeps, for each value, the keys of the objects
// that have it. An update moves an object between values.
func ExampleIndexer() {
	idx := store.New(store.Options{Indexers: store.Indexers{
		store.NamespaceIndex: store.MetaNamespaceIndexFunc,
		"app":                byApp,
	}})
	_ = idx.Add(pod("shop", "web-1", "11", map[string]string{"app": "web"}))
	_ = idx.Add(pod("shop", "web-2", "12", map[string]string{"app": "web"}))
	_ = idx.Add(pod("shop", "db-1", "13", map[string]string{"app": "db"}))
	_ = idx.Add(pod("lab", "job-1", "14", nil)) // no app label: in no "app" bucket

	show := func() {
		for _, app := range []string{"web", "db"} {
			keys, _ := idx.IndexKeys("app", app)
			sort.Strings(keys)
			fmt.Printf("  app=%s: %v\n", app, keys)
		}
	}
	fmt.Println("after four adds:")
	show()
	inShop, _ := idx.ByIndex(store.NamespaceIndex, "shop")
	fmt.Println("  in namespace shop:", len(inShop))

	_ = idx.Update(pod("shop", "web-2", "15", map[string]string{"app": "db"}))
	fmt.Println("after web-2 is relabelled app=db:")
	show()
	values := idx.ListIndexFuncValues("app")
	sort.Strings(values)
	fmt.Println("  app values:", values)
	// Output:
	// after four adds:
	//   app=web: [shop/web-1 shop/web-2]
	//   app=db: [shop/db-1]
	//   in namespace shop: 3
	// after web-2 is relabelled app=db:
	//   app=web: [shop/web-1]
	//   app=db: [shop/db-1 shop/web-2]
	//   app values: [db web]
}

// The cache remembers the resourceVersion of its last write (S4): an
// informer's cache knows how fresh it is. A tombstone, the object an
// informer hands to OnDelete for a delete it missed, is keyed by the key
// it carries.
func ExampleDeletedFinalStateUnknown() {
	idx := store.New(store.Options{})
	_ = idx.Add(pod("shop", "web-1", "11", nil))
	_ = idx.Update(pod("shop", "web-1", "12", nil))
	fmt.Println("resourceVersion after the update:", idx.LastStoreSyncResourceVersion())

	tomb := store.DeletedFinalStateUnknown{Key: "shop/web-1", Obj: pod("shop", "web-1", "12", nil)}
	key, _ := store.DeletionHandlingMetaNamespaceKeyFunc(tomb)
	fmt.Println("a tombstone's key:", key)
	// Output:
	// resourceVersion after the update: 12
	// a tombstone's key: shop/web-1
}
