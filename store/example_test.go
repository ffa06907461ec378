package store_test

import (
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cachelab/cachelab/store"
)

// pod makes a metadata-only object, as a metadata informer caches.
func pod(ns, name, rv, app string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Namespace: ns, Name: name, ResourceVersion: rv, Labels: map[string]string{"app": app}}}
}

func byApp(obj any) ([]string, error) {
	return []string{obj.(metav1.Object).GetLabels()["app"]}, nil
}

// An informer's cache: objects by key, an index by label, and the
// resourceVersion of the last write.
func Example() {
	cache := store.New(store.Options{Indexers: store.Indexers{"app": byApp}})
	_ = cache.Add(pod("shop", "web-1", "11", "web"))
	_ = cache.Add(pod("shop", "web-2", "12", "web"))
	_ = cache.Add(pod("shop", "db-1", "13", "db"))
	_ = cache.Update(pod("shop", "web-2", "14", "web"))

	obj, found, _ := cache.GetByKey("shop/web-2")
	fmt.Println("shop/web-2:", found, obj.(metav1.Object).GetResourceVersion())

	keys, _ := cache.IndexKeys("app", "web")
	fmt.Println("app=web:", keys)

	values := cache.ListIndexFuncValues("app")
	sort.Strings(values)
	fmt.Println("app values:", values)

	fmt.Println("remembered RV:", cache.LastStoreSyncResourceVersion())
	// Output:
	// shop/web-2: true 14
	// app=web: [shop/web-1 shop/web-2]
	// app values: [db web]
	// remembered RV: 14
}

// Keys are "namespace/name", or just "name" for cluster-scoped objects.
func ExampleMetaNamespaceKeyFunc() {
	k1, _ := store.MetaNamespaceKeyFunc(pod("shop", "web-1", "", ""))
	k2, _ := store.MetaNamespaceKeyFunc(&metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "node-7"}})
	_, err := store.MetaNamespaceKeyFunc("not an object")
	ns, name, _ := store.SplitMetaNamespaceKey(k1)
	fmt.Println(k1, k2)
	fmt.Println(ns, name)
	fmt.Println(err)
	// Output:
	// shop/web-1 node-7
	// shop web-1
	// object has no meta: object does not implement the Object interfaces
}
