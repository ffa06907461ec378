package crd_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/cachelab/cachelab/crd"
)

const manifest = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: foos.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: foos, singular: foo, kind: Foo}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              replicas: {type: integer, minimum: 0, default: 1}
              color: {type: string}
            x-kubernetes-validations:
            - rule: "!has(self.color) || self.color != 'red'"
              message: no red
`

func compile(t *testing.T, text string) *crd.Definition {
	t.Helper()
	js, err := yaml.YAMLToJSON([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	d, err := crd.Compile(js)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func foo(spec map[string]any) map[string]any {
	return map[string]any{"apiVersion": "example.com/v1", "kind": "Foo",
		"metadata": map[string]any{"namespace": "ns0", "name": "f", "resourceVersion": "7"}, "spec": spec}
}

// Admit is the server's path from a request body to etcd: a field the
// schema does not know is pruned, a default is set, generation starts
// at 1 and counts changes of anything but metadata, and what the schema
// or its CEL rules refuse is a 422 in kubectl's words.
func TestAdmit(t *testing.T) {
	d := compile(t, manifest)
	obj := foo(map[string]any{"color": "blue", "size": "large"})
	if err := d.Admit(obj, nil); err != nil {
		t.Fatal(err)
	}
	want := foo(map[string]any{"color": "blue", "replicas": int64(1)})
	want["metadata"].(map[string]any)["generation"] = int64(1)
	if diff := cmp.Diff(want, obj); diff != "" {
		t.Errorf("create (-want +got):\n%s", diff)
	}

	next := foo(map[string]any{"color": "green", "replicas": int64(1)})
	next["metadata"].(map[string]any)["generation"] = int64(1)
	if err := d.Admit(next, obj); err != nil {
		t.Fatal(err)
	}
	if g := next["metadata"].(map[string]any)["generation"]; g != int64(2) {
		t.Errorf("an update of the spec: generation %v, want 2", g)
	}

	for _, bad := range []struct {
		spec map[string]any
		says string
	}{
		{map[string]any{"replicas": int64(-1)}, `Foo.example.com "f" is invalid: spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0`},
		{map[string]any{"replicas": "two"}, `spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"`},
		{map[string]any{"color": "red"}, `Foo.example.com "f" is invalid: spec: Invalid value: no red`},
	} {
		err := d.Admit(foo(bad.spec), nil)
		if err == nil || !strings.Contains(err.Error(), bad.says) {
			t.Errorf("create with spec %v: %v; want an error saying %q", bad.spec, err, bad.says)
		}
	}
}

// A definition kube-apiserver would refuse is refused, in its words.
func TestCompileRefuses(t *testing.T) {
	js, _ := yaml.YAMLToJSON([]byte(strings.Replace(manifest, "name: foos.example.com", "name: bars.example.com", 1)))
	if _, err := crd.Compile(js); err == nil || !strings.Contains(err.Error(), "must be spec.names.plural+\".\"+spec.group") {
		t.Errorf("a misnamed definition: %v", err)
	}
	js, _ = yaml.YAMLToJSON([]byte(strings.Replace(manifest, "replicas: {type: integer, minimum: 0, default: 1}", "replicas: {minimum: 0}", 1)))
	if _, err := crd.Compile(js); err == nil || !strings.Contains(err.Error(), "type") {
		t.Errorf("a schema that is not structural: %v", err)
	}
}
