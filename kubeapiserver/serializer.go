package kubeapiserver

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured/unstructuredscheme"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/runtime/serializer/versioning"
)

// The resource's objects are unstructured, as cachelab's etcd holds them:
// JSON maps, whatever fields they have. kube-apiserver serves such
// objects for custom resources (apiextensions-apiserver's
// customresource_handler.go), and this file does what that handler does
// for them, for JSON: a serializer that encodes an *Unstructured as it
// is, and everything else (a Status, ListOptions, WatchEvent) through a
// scheme of meta/v1's types.

// kinds are a server's scheme and what is made of it. The scheme holds
// meta/v1's types (Status, ListOptions, WatchEvent, ...), the types
// every API group's responses share, in each group version the server
// serves: a watch's events are encoded as WatchEvents of the resource's
// group version (apiextensions-apiserver registers them for each custom
// resource's the same way). Each server has its own, made before it
// serves, because a custom resource's group version is the scenario's
// (its crd step's), and a scheme is not safe to add to while other
// servers read it.
type kinds struct {
	scheme *runtime.Scheme
	// codecs serve the generic API server's own paths (health, version,
	// discovery) and its filters' errors.
	codecs serializer.CodecFactory
	// params decode a request's query into ListOptions.
	params runtime.ParameterCodec
}

// newKinds is the kinds of a server that serves gvs.
func newKinds(gvs []schema.GroupVersion) kinds {
	s := runtime.NewScheme()
	for _, gv := range gvs {
		if !s.IsVersionRegistered(gv) {
			metav1.AddToGroupVersion(s, gv)
		}
	}
	return kinds{scheme: s, codecs: serializer.NewCodecFactory(s), params: runtime.NewParameterCodec(s)}
}

// typer names an object's kind: an unstructured one by its apiVersion
// and kind fields, any other by the scheme.
type typer struct{ scheme *runtime.Scheme }

func (t typer) ObjectKinds(obj runtime.Object) ([]schema.GroupVersionKind, bool, error) {
	if _, ok := obj.(runtime.Unstructured); ok {
		return unstructuredscheme.NewUnstructuredObjectTyper().ObjectKinds(obj)
	}
	return t.scheme.ObjectKinds(obj)
}

func (typer) Recognizes(gvk schema.GroupVersionKind) bool { return true }

// creater makes an unstructured object of any kind the scheme does not hold.
type creater struct{ scheme *runtime.Scheme }

func (c creater) New(kind schema.GroupVersionKind) (runtime.Object, error) {
	if c.scheme.Recognizes(kind) {
		return c.scheme.New(kind)
	}
	return unstructuredscheme.NewUnstructuredCreator().New(kind)
}

// converter converts nothing: the resource has one version, so an
// unstructured object is served as it is stored, and is refused in any
// other version. A body sent to be written is decoded into an object of
// the resource's kind, and refused if it is of another kind or version
// (the create or update handler answers 400, as kube-apiserver answers a
// Namespace sent to /pods). Field selectors keep their labels
// (metadata.name, metadata.namespace; anything else is refused, as a
// custom resource's are).
type converter struct{ scheme *runtime.Scheme }

func (c converter) Convert(in, out, context interface{}) error {
	u, uok := in.(runtime.Unstructured)
	o, ook := out.(runtime.Unstructured)
	if uok && ook {
		from, to := u.GetObjectKind().GroupVersionKind(), o.GetObjectKind().GroupVersionKind()
		if !to.Empty() && from != to {
			return fmt.Errorf("kubeapiserver: the object is a %s %s, not a %s %s", from.GroupVersion(), from.Kind, to.GroupVersion(), to.Kind)
		}
	}
	return c.scheme.Convert(in, out, context)
}

func (c converter) ConvertToVersion(in runtime.Object, gv runtime.GroupVersioner) (runtime.Object, error) {
	u, ok := in.(runtime.Unstructured)
	if !ok {
		return c.scheme.ConvertToVersion(in, gv)
	}
	kind := u.GetObjectKind().GroupVersionKind()
	if to, ok := gv.KindForGroupVersionKinds([]schema.GroupVersionKind{kind}); !ok || to != kind {
		return nil, fmt.Errorf("kubeapiserver: %s is served only as itself, not as %v", kind, gv)
	}
	return in, nil
}

func (converter) ConvertFieldLabel(gvk schema.GroupVersionKind, label, value string) (string, string, error) {
	return runtime.DefaultMetaV1FieldSelectorConversion(label, value)
}

// negotiated is the resource's negotiated serializer: JSON, as a whole
// object or as a stream of watch events. A body a client sends (a create
// or an update) is also decoded strictly, as its fieldValidation asks: a
// field given twice is a warning (Warn, the default) or refused (Strict).
// An unknown field is neither: an unstructured object has no schema to
// know one by.
type negotiated struct{ scheme *runtime.Scheme }

func (n negotiated) SupportedMediaTypes() []runtime.SerializerInfo {
	c, t := creater{n.scheme}, typer{n.scheme}
	plain := json.NewSerializerWithOptions(json.DefaultMetaFactory, c, t, json.SerializerOptions{})
	pretty := json.NewSerializerWithOptions(json.DefaultMetaFactory, c, t, json.SerializerOptions{Pretty: true})
	strict := json.NewSerializerWithOptions(json.DefaultMetaFactory, c, t, json.SerializerOptions{Strict: true})
	return []runtime.SerializerInfo{{
		MediaType:        runtime.ContentTypeJSON,
		MediaTypeType:    "application",
		MediaTypeSubType: "json",
		EncodesAsText:    true,
		Serializer:       plain,
		PrettySerializer: pretty,
		StrictSerializer: strict,
		StreamSerializer: &runtime.StreamSerializerInfo{EncodesAsText: true, Serializer: plain, Framer: json.Framer},
	}}
}

func (n negotiated) EncoderForVersion(enc runtime.Encoder, gv runtime.GroupVersioner) runtime.Encoder {
	return versioning.NewCodec(enc, nil, converter{n.scheme}, creater{n.scheme}, typer{n.scheme}, nil, gv, nil, "kubeapiserver")
}

func (n negotiated) DecoderToVersion(dec runtime.Decoder, gv runtime.GroupVersioner) runtime.Decoder {
	return versioning.NewCodec(nil, dec, converter{n.scheme}, creater{n.scheme}, typer{n.scheme}, nil, nil, gv, "kubeapiserver")
}
