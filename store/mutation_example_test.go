package store_test

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/cachelab/cachelab/store"
)

// A controller's write read back before the informer's store has it:
// the mutation cache answers with the newer of the two, and gives way to
// the store once the store has caught up.
func ExampleNewIntegerResourceVersionMutationCache() {
	informerStore := store.NewIndexer(store.MetaNamespaceKeyFunc, store.Indexers{})
	_ = informerStore.Add(pod("shop", "web", "11", "web"))
	mc := store.NewIntegerResourceVersionMutationCache(klog.Background(), informerStore, informerStore, time.Minute, false)

	read := func() string {
		obj, _, _ := mc.GetByKey("shop/web")
		return obj.(metav1.Object).GetResourceVersion()
	}
	mc.Mutation(pod("shop", "web", "12", "web")) // what our update returned
	fmt.Println("the informer's store has 11; the mutation cache answers", read())

	_ = informerStore.Update(pod("shop", "web", "13", "web")) // someone else's update, seen
	fmt.Println("the informer's store has 13; the mutation cache answers", read())
	// Output:
	// the informer's store has 11; the mutation cache answers 12
	// the informer's store has 13; the mutation cache answers 13
}
