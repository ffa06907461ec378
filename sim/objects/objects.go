// Package objects is what a scenario's write makes of an object: the
// object a create makes of a resource, and what a create's or update's
// arguments (labels=, finalizers=, image=, data=, replicas=, spec=) set
// on it. The simulator's worlds and package controllertest's both write
// what it makes, so that one scenario line means one object everywhere.
package objects

import (
	"encoding/base64"
	"fmt"
	"maps"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cachelab/cachelab/listwatch"
	"github.com/cachelab/cachelab/sim/scenario"
	"github.com/cachelab/cachelab/sim/trace"
)

// Example is an object of res with only its apiVersion and kind: an
// informer's example object, and the start of a new one.
func Example(res listwatch.Resource) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(res.APIVersion())
	u.SetKind(res.Kind)
	return u
}

// New is a new object of res under key (namespace/name, or name for a
// cluster-scoped custom resource), with what ch sets; custom is res's
// definition when it is a custom resource.
func New(res listwatch.Resource, custom *scenario.CustomResource, key string, ch Change) (*unstructured.Unstructured, error) {
	if custom != nil {
		u := &unstructured.Unstructured{Object: custom.Object(key, nil)}
		return u, ch.Apply(u)
	}
	ns, name, ok := strings.Cut(key, "/")
	if !ok || ns == "" || name == "" {
		return nil, fmt.Errorf("object %q: want namespace/name", key)
	}
	u := Example(res)
	u.SetNamespace(ns)
	u.SetName(name)
	switch res.Resource {
	case "secrets":
		// What kube-apiserver's defaulting gives a secret of no type.
		u.Object["type"] = "Opaque"
	case "deployments":
		// A deployment as kubectl create deployment makes one: its
		// selector and its pod template's labels app=<name>, one
		// container. No controller makes its pods here.
		replicas := int64(1)
		if ch.Replicas != nil {
			replicas = *ch.Replicas
		}
		u.Object["spec"] = map[string]any{
			"replicas": replicas,
			"selector": map[string]any{"matchLabels": map[string]any{"app": name}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": name}},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "app", "image": DefaultImage}}},
			},
		}
	}
	if err := ch.Apply(u); err != nil {
		return nil, err
	}
	return u, nil
}

// DefaultImage is a new deployment's container's image.
const DefaultImage = "nginx:1.27"

// Change is what a write sets of an object: nil or "" leaves a field
// as it is.
type Change struct {
	Labels     map[string]string // the new labels (replacing the old), or nil
	Finalizers []string          // the new finalizers (replacing the old), or nil
	Image      string            // a pod's spec.image, a deployment's container's image
	Data       map[string]string // a configmap's or secret's data (replacing the old), or nil
	Replicas   *int64            // a deployment's spec.replicas
	Spec       map[string]any    // a custom resource's spec fields to set
}

// ChangeOf is what the step a sets.
func ChangeOf(a scenario.Args) Change {
	var ch Change
	if _, ok := a.Values["labels"]; ok {
		ch.Labels = a.Labels()
		if ch.Labels == nil {
			ch.Labels = map[string]string{}
		}
	}
	ch.Image, _ = a.Value("image")
	if _, ok := a.Values["data"]; ok {
		ch.Data = a.Data()
	}
	if v, ok := a.Value("replicas"); ok {
		n, _ := strconv.ParseInt(v, 10, 64)
		ch.Replicas = &n
	}
	ch.Finalizers = a.Finalizers()
	ch.Spec = a.Spec()
	return ch
}

// Apply sets what ch sets on u.
func (ch Change) Apply(u *unstructured.Unstructured) error {
	if ch.Labels != nil {
		u.SetLabels(ch.Labels)
	}
	if ch.Finalizers != nil {
		// None is no field at all, as kube-apiserver stores a typed
		// object's empty list.
		u.SetFinalizers(nil)
		if len(ch.Finalizers) > 0 {
			u.SetFinalizers(ch.Finalizers)
		}
	}
	if ch.Image != "" {
		path := []string{"spec", "image"}
		if u.GetKind() == "Deployment" {
			cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
			if len(cs) == 0 {
				return fmt.Errorf("deployment %s has no container to set the image of", trace.KeyOf(u))
			}
			cs[0].(map[string]any)["image"] = ch.Image
			if err := unstructured.SetNestedSlice(u.Object, cs, "spec", "template", "spec", "containers"); err != nil {
				return err
			}
		} else if err := unstructured.SetNestedField(u.Object, ch.Image, path...); err != nil {
			return err
		}
	}
	if ch.Data != nil {
		data := make(map[string]any, len(ch.Data))
		for k, v := range ch.Data {
			if u.GetKind() == "Secret" {
				v = base64.StdEncoding.EncodeToString([]byte(v)) // as kube-apiserver stores a secret's data
			}
			data[k] = v
		}
		u.Object["data"] = data
	}
	if ch.Replicas != nil {
		if err := unstructured.SetNestedField(u.Object, *ch.Replicas, "spec", "replicas"); err != nil {
			return err
		}
	}
	if len(ch.Spec) > 0 {
		spec, _ := u.Object["spec"].(map[string]any)
		if spec == nil {
			spec = map[string]any{}
		}
		spec = maps.Clone(spec)
		maps.Copy(spec, ch.Spec)
		u.Object["spec"] = spec
	}
	return nil
}
