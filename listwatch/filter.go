package listwatch

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
)

// filter is a request's label and field selectors (parseOptions),
// applied after decoding as kube-apiserver does (E5).
type filter struct {
	labels labels.Selector
	fields fields.Selector
}

// empty reports whether the filter lets everything through.
func (f filter) empty() bool { return f.labels.Empty() && f.fields.Empty() }

func (f filter) matches(obj *unstructured.Unstructured) bool {
	if f.empty() {
		return true // without copying the labels for nothing
	}
	if !f.labels.Matches(labels.Set(obj.GetLabels())) {
		return false
	}
	return f.fields.Matches(fields.Set{"metadata.name": obj.GetName(), "metadata.namespace": obj.GetNamespace()})
}
