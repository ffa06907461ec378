package consistencydetector_test

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"

	"github.com/cachelab/cachelab/consistencydetector"
)

// A watch-list stream gave a reflector a and b, synced at RV 9; etcd
// holds a, b and c at RV 9. The check LISTs RV 9 exactly, and panics.
func Example() {
	ctx := klog.NewContext(context.Background(), logr.Discard())
	etcd := func(_ context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		fmt.Printf("LIST resourceVersion=%s resourceVersionMatch=%s\n", opts.ResourceVersion, opts.ResourceVersionMatch)
		return &v1.PodList{Items: []v1.Pod{*pod("a", "5"), *pod("b", "7"), *pod("c", "8")}}, nil
	}
	streamed := func() []runtime.Object { return objects(pod("a", "5"), pod("b", "7")) }
	defer func() { fmt.Println("panic:", recover()) }()
	consistencydetector.CheckDataConsistency(ctx, "pods reflector", "9", etcd, nil, metav1.ListOptions{}, streamed)
	// Output:
	// LIST resourceVersion=9 resourceVersionMatch=Exact
	// panic: data inconsistency detected for pods reflector, panicking!
}
