package fooctl

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Registered says whether the registry holds a registration for each
// Foo that exists, and for no other, in objs (every object of every
// resource, by resource): one of the operator's invariants.
func Registered(objs map[string][]unstructured.Unstructured) error {
	want := map[string]bool{}
	for _, f := range objs["foos"] {
		want[f.GetNamespace()+"."+f.GetName()] = true
	}
	for _, cm := range objs["configmaps"] {
		if cm.GetNamespace() != Registry {
			continue
		}
		if !want[cm.GetName()] {
			return fmt.Errorf("registration %s is for a Foo that does not exist", cm.GetName())
		}
		delete(want, cm.GetName())
	}
	for name := range want {
		return fmt.Errorf("Foo %s is not registered", name)
	}
	return nil
}

// Colored says whether each Foo's ConfigMap says its color, in objs.
func Colored(objs map[string][]unstructured.Unstructured) error {
	cms := map[string]unstructured.Unstructured{}
	for _, cm := range objs["configmaps"] {
		cms[cm.GetNamespace()+"/"+cm.GetName()] = cm
	}
	for _, f := range objs["foos"] {
		color, _, _ := unstructured.NestedString(f.Object, "spec", "color")
		cm, ok := cms[f.GetNamespace()+"/"+f.GetName()+"-config"]
		got, _, _ := unstructured.NestedString(cm.Object, "data", "color")
		if !ok || got != color {
			return fmt.Errorf("Foo %s/%s is %s; its ConfigMap says %q", f.GetNamespace(), f.GetName(), color, got)
		}
	}
	return nil
}
