package sim

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cachelab/cachelab/listwatch"
	"github.com/cachelab/cachelab/sim/scenario"
	"github.com/cachelab/cachelab/sim/trace"
)

// Custom resources: a scenario's crd steps define them (package
// sim/scenario's CustomResource), and every world of the run's own
// storage serves them as kube-apiserver does: under
// /registry/<group>/<plural> in etcd, behind a watch cache of their own
// in the watch-cache world (kubeapi.go), over HTTPS in their own group
// version (package kubeapiserver), each write pruned, defaulted,
// prepared and validated by apiextensions-apiserver's own code (package
// crd, which package sim/full links in as world.Full's CustomResource).

// resourceOf is the resource a scenario names name: a built-in one, or
// one of its crd steps'.
func (r *runner) resourceOf(name string) listwatch.Resource {
	if c, ok := r.custom(name); ok {
		return listwatch.Resource{Group: c.Group, Version: c.Version, Resource: c.Plural, Kind: c.Kind,
			Namespaced: c.Namespaced, Store: c.Group + "/" + c.Plural}
	}
	return builtIn(name)
}

// resourceNames are every resource the scenario can name: the built-in
// ones (scenario.Resources), then its custom ones.
func (r *runner) resourceNames() []string {
	out := append([]string(nil), scenario.Resources...)
	for _, c := range r.sc.CustomResources {
		out = append(out, c.Plural)
	}
	return out
}

// custom is the scenario's custom resource named name, if it is one.
func (r *runner) custom(name string) (scenario.CustomResource, bool) {
	for _, c := range r.sc.CustomResources {
		if c.Plural == name {
			return c, true
		}
	}
	return scenario.CustomResource{}, false
}

// admitting is a custom resource's writer: what a create or update
// writes is first what kube-apiserver's apiextensions makes of it
// (package crd), or its refusal.
type admitting struct {
	*listwatch.Writer
	admit func(obj, old map[string]any) error
}

func (a admitting) Create(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	obj = obj.DeepCopy()
	if err := a.admit(obj.Object, nil); err != nil {
		return nil, err
	}
	return a.Writer.Create(ctx, obj)
}

// Update admits obj against the object stored now, as the registry's
// update does inside its read-modify-write.
func (a admitting) Update(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	old, err := a.Writer.Get(ctx, obj.GetNamespace(), obj.GetName())
	if err != nil {
		return nil, err
	}
	obj = obj.DeepCopy()
	if err := a.admit(obj.Object, old.Object); err != nil {
		return nil, err
	}
	return a.Writer.Update(ctx, obj)
}

// customWriter is the writer of custom resource name, on kv.
func (r *runner) customWriter(w *listwatch.Writer, name string) (objectWriter, error) {
	if r.full == nil || r.full.CustomResource == nil {
		return nil, fmt.Errorf("custom resource %s: this build leaves out kube-apiserver's apiextensions", name)
	}
	c, _ := r.custom(name)
	admit, err := r.full.CustomResource(c.Manifest)
	if err != nil {
		return nil, fmt.Errorf("crd %s: %w", c.Name(), err)
	}
	return admitting{w, admit}, nil
}

// cmdCRD is a crd step: kube-apiserver serves the custom resource from
// now on. The run's worlds were made for it before the first step (its
// writer, its watch cache), so what is left is to say so. The
// CustomResourceDefinition itself is not written to etcd, and the
// resource is served at once: kube-apiserver's wait for the definition
// to be Established is not modelled.
func cmdCRD(r *runner, a scenario.Args) error {
	c, ok := a.Defines()
	if !ok {
		return fmt.Errorf("crd: no custom resource defined here")
	}
	if _, err := r.writerOf(c.Plural); err != nil {
		return err
	}
	scope := "namespaced"
	if !c.Namespaced {
		scope = "cluster-scoped"
	}
	r.note(trace.LayerEtcd, "", fmt.Sprintf("crd %s: kube-apiserver serves %s (kind %s, %s/%s, %s), kept under /registry/%s/%s",
		c.Name(), c.Plural, c.Kind, c.Group, c.Version, scope, c.Group, c.Plural))
	return nil
}
