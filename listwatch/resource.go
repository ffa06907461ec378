package listwatch

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// Resource names a kind of object and where its objects live in etcd
// (E1): /registry/<resource>/<namespace>/<name>, or
// /registry/<resource>/<name> for a cluster-scoped one.
type Resource struct {
	Group, Version string // "" and "v1" for the core group
	Resource       string // plural, lower case: "pods"
	Kind           string // "Pod"
	Namespaced     bool
	// Store is where its objects' keys begin under /registry/, when not
	// at Resource: kube-apiserver keeps a custom resource's under its
	// group too (/registry/example.com/foos/...), a built-in one's under
	// the resource alone (/registry/deployments/...).
	Store string
}

// StorePath is where r's objects' keys begin under /registry/:
// "pods", "example.com/foos".
func (r Resource) StorePath() string {
	if r.Store != "" {
		return r.Store
	}
	return r.Resource
}

// Pods is the core v1 Pod resource, the one most scenarios use.
var Pods = Resource{Version: "v1", Resource: "pods", Kind: "Pod", Namespaced: true}

// The other built-in resources a scenario can write and watch.
var (
	ConfigMaps  = Resource{Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespaced: true}
	Secrets     = Resource{Version: "v1", Resource: "secrets", Kind: "Secret", Namespaced: true}
	Deployments = Resource{Group: "apps", Version: "v1", Resource: "deployments", Kind: "Deployment", Namespaced: true}
)

// BuiltIn are the resources every world of the run's own serves, by
// the name a scenario gives them: kube-apiserver's resource name,
// plural, with its group after a dot where it has one (as kubectl
// names them: "deployments.apps"); the core group's go without.
var BuiltIn = []Resource{Pods, ConfigMaps, Secrets, Deployments}

// Name is r as a scenario and the trace name it: "pods", "deployments".
// kube-apiserver's own storage keys use the resource alone, group or not
// (/registry/deployments/...), so the name does too.
func (r Resource) Name() string { return r.Resource }

// GroupVersionResource is r's group, version and resource.
func (r Resource) GroupVersionResource() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: r.Group, Version: r.Version, Resource: r.Resource}
}

// APIVersion is what r's objects carry as apiVersion: "v1", "apps/v1".
func (r Resource) APIVersion() string { return r.GroupVersionKind().GroupVersion().String() }

// GroupResource is what API errors name ("pods", "deployments.apps").
func (r Resource) GroupResource() schema.GroupResource {
	return schema.GroupResource{Group: r.Group, Resource: r.Resource}
}

// GroupVersionKind is the apiVersion and kind every object of r carries.
func (r Resource) GroupVersionKind() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}
}

// prefix is the etcd key prefix under which every object of r lives.
func (r Resource) prefix() string { return "/registry/" + r.StorePath() + "/" }

// namespacePrefix is the prefix of one namespace's objects, or of all
// objects when namespace is "".
func (r Resource) namespacePrefix(namespace string) string {
	if r.Namespaced && namespace != "" {
		return r.prefix() + namespace + "/"
	}
	return r.prefix()
}

// key is the etcd key of one object.
func (r Resource) key(namespace, name string) string {
	if r.Namespaced {
		return r.prefix() + namespace + "/" + name
	}
	return r.prefix() + name
}

// encode is what is stored: the object's JSON without resourceVersion,
// which etcd's revision stands in for (E1).
func encode(obj *unstructured.Unstructured) ([]byte, error) {
	c := obj.DeepCopy()
	c.SetResourceVersion("")
	return json.Marshal(c.Object)
}

// decode reads a stored value back, stamping it with the revision it was
// read at: its mod revision, or for a delete the delete's revision (E1, E6).
// Its error names the key.
func decode(key string, value []byte, rev int64) (*unstructured.Unstructured, error) {
	obj, err := decodeValue(value, rev)
	if err != nil {
		return nil, fmt.Errorf("decoding %s: %w", key, err)
	}
	return obj, nil
}

// decodeValue is decode without the key in its error, which is the
// decoder's own (kube-apiserver's messages add the key where they want it).
// A whole number decodes as an int64, as kube-apiserver's unstructured
// decoder (apimachinery's util/json) reads it, not as encoding/json's
// float64: unstructured's accessors (GetDeletionGracePeriodSeconds,
// NestedInt64) see no number in a float64, and a client comparing
// objects would see 0 differ from 0.
func decodeValue(value []byte, rev int64) (*unstructured.Unstructured, error) {
	obj := &unstructured.Unstructured{}
	if err := utiljson.Unmarshal(value, &obj.Object); err != nil {
		return nil, err
	}
	if obj.Object == nil || obj.GetKind() == "" || obj.GetName() == "" {
		return nil, fmt.Errorf("not an object with kind and metadata.name")
	}
	obj.SetResourceVersion(strconv.FormatInt(rev, 10))
	return obj, nil
}

// checkObject refuses an object that does not belong to r or has no name.
func (r Resource) checkObject(obj *unstructured.Unstructured) error {
	if gvk := obj.GroupVersionKind(); gvk != r.GroupVersionKind() {
		return fmt.Errorf("object is a %s, want %s", gvk, r.GroupVersionKind())
	}
	if obj.GetName() == "" || strings.Contains(obj.GetName(), "/") {
		return fmt.Errorf("object name %q is empty or contains '/'", obj.GetName())
	}
	if r.Namespaced && obj.GetNamespace() == "" {
		return fmt.Errorf("%s is namespaced but the object has no namespace", r.Resource)
	}
	if !r.Namespaced && obj.GetNamespace() != "" {
		return fmt.Errorf("%s is cluster-scoped but the object has namespace %q", r.Resource, obj.GetNamespace())
	}
	return nil
}
