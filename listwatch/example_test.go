package listwatch_test

import (
	"context"
	"fmt"
	"os"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cachelab/cachelab/listwatch"
)

// An etcd in the process, a pod written the way kube-apiserver writes it,
// then the LIST and WATCH an informer would make.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	etcd, err := listwatch.StartEmbedded(ctx, listwatch.EmbeddedOptions{Dir: dir})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer etcd.Close()
	writer := listwatch.NewWriter(etcd.Client(), listwatch.Pods, listwatch.WriterOptions{})
	lw := listwatch.NewListerWatcher(etcd.Client(), listwatch.Pods, listwatch.Options{})

	web := pod("shop/web")
	created, _ := writer.Create(ctx, web)
	fmt.Println("created shop/web at resourceVersion", created.GetResourceVersion())

	list, _ := lw.ListWithContext(ctx, metav1.ListOptions{})
	fmt.Println("list resourceVersion", list.(*unstructured.UnstructuredList).GetResourceVersion())

	// Watch from the list's resourceVersion: every change after it.
	w, _ := lw.WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: created.GetResourceVersion()})
	defer w.Stop()
	created.SetLabels(map[string]string{"tier": "front"})
	_, _ = writer.Update(ctx, created)
	_, _ = writer.Delete(ctx, "shop", "web", listwatch.Preconditions{})
	for range 2 {
		e := <-w.ResultChan()
		obj := e.Object.(*unstructured.Unstructured)
		fmt.Println(e.Type, obj.GetName(), obj.GetResourceVersion())
	}
	// Output:
	// created shop/web at resourceVersion 2
	// list resourceVersion 2
	// MODIFIED web 3
	// DELETED web 4
}
