package wire

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
)

// What the client decodes, and how. A response body is JSON; what it
// holds is either a kind meta/v1 defines (a Status, a WatchEvent,
// ListOptions: the vocabulary every API group shares, held by scheme) or
// an object of the resource, which the client does not know the Go type
// of and reads as *unstructured.Unstructured. client-go's dynamic client
// reads bodies the same way (dynamic/scheme.go).

// scheme holds meta/v1's kinds under "v1", as every API group's
// responses use them. Status is held unversioned: a Status in any
// apiVersion is a *metav1.Status.
var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	return s
}()

// parameterCodec turns ListOptions into a query, field by field under
// their JSON names, leaving out what is empty (a set pointer is sent
// even when it points at a zero).
var parameterCodec = runtime.NewParameterCodec(scheme)

// creater makes what a body's kind names: a meta/v1 type the scheme
// knows, or an *unstructured.Unstructured of that kind.
type creater struct{}

func (creater) New(kind schema.GroupVersionKind) (runtime.Object, error) {
	if obj, err := scheme.New(kind); err == nil {
		return obj, nil
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(kind)
	return u, nil
}

// typer names an object's kind: an unstructured one by its own fields.
type typer struct{}

func (typer) ObjectKinds(obj runtime.Object) ([]schema.GroupVersionKind, bool, error) {
	if u, ok := obj.(runtime.Unstructured); ok {
		gvk := u.GetObjectKind().GroupVersionKind()
		if gvk.Kind == "" {
			return nil, false, runtime.NewMissingKindErr("object has no kind field")
		}
		if gvk.Version == "" {
			return nil, false, runtime.NewMissingVersionErr("object has no apiVersion field")
		}
		return []schema.GroupVersionKind{gvk}, false, nil
	}
	return scheme.ObjectKinds(obj)
}

func (typer) Recognizes(schema.GroupVersionKind) bool { return true }

// decoder reads one JSON document.
var decoder = json.NewSerializerWithOptions(json.DefaultMetaFactory, creater{}, typer{}, json.SerializerOptions{})
