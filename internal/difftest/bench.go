package difftest

import (
	"fmt"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BenchSizes are the store and queue sizes benchmarks run at.
var BenchSizes = []int{1_000, 10_000, 100_000}

// BenchObjects returns n typed objects (PartialObjectMetadata: metadata
// only, as a metadata informer caches) spread over 10 namespaces and 10
// "app" label values, all at resourceVersion rv.
func BenchObjects(n, rv int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = &metav1.PartialObjectMetadata{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{
				Namespace:       fmt.Sprintf("ns-%d", i%10),
				Name:            fmt.Sprintf("pod-%06d", i),
				ResourceVersion: strconv.Itoa(rv),
				Labels:          map[string]string{"app": fmt.Sprintf("app-%d", i%10)},
			},
		}
	}
	return out
}

// IndexByAppLabel indexes benchmark objects by their "app" label.
func IndexByAppLabel(obj any) ([]string, error) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil, fmt.Errorf("not an object: %T", obj)
	}
	return []string{m.GetLabels()["app"]}, nil
}
