package listwatch

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
)

// filter is a request's label and field selectors, applied after decoding
// as kube-apiserver does (E5).
type filter struct {
	labels labels.Selector
	fields fields.Selector
}

// supportedFields are the field labels every resource supports.
var supportedFields = map[string]bool{"metadata.name": true, "metadata.namespace": true}

func newFilter(labelSelector, fieldSelector string) (filter, error) {
	ls, err := labels.Parse(labelSelector)
	if err != nil {
		return filter{}, badRequest("invalid label selector %q: %v", labelSelector, err)
	}
	fs, err := fields.ParseSelector(fieldSelector)
	if err != nil {
		return filter{}, badRequest("invalid field selector %q: %v", fieldSelector, err)
	}
	for _, r := range fs.Requirements() {
		if !supportedFields[r.Field] {
			return filter{}, badRequest("field label not supported: %s", r.Field)
		}
	}
	return filter{labels: ls, fields: fs}, nil
}

// empty reports whether the filter lets everything through.
func (f filter) empty() bool { return f.labels.Empty() && f.fields.Empty() }

func (f filter) matches(obj *unstructured.Unstructured) bool {
	if !f.labels.Matches(labels.Set(obj.GetLabels())) {
		return false
	}
	return f.fields.Matches(fields.Set{"metadata.name": obj.GetName(), "metadata.namespace": obj.GetNamespace()})
}
