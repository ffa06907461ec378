package scenario_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cachelab/cachelab/crd"
	"github.com/cachelab/cachelab/sim/scenario"
)

// fooCRD is a crd step defining foos.example.com, whose spec.replicas
// is an integer of at least 0.
const fooCRD = `crd
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: foos.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: foos, kind: Foo}
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
              replicas: {type: integer, minimum: 0}
----
`

// clusterCRD defines bars.example.com, cluster-scoped (23 lines, its
// "----" included).
var clusterCRD = strings.NewReplacer("foos", "bars", "Foo", "Bar", "scope: Namespaced", "scope: Cluster").Replace(fooCRD)

// withCRD is a scenario that defines foos at line 3 (its manifest on
// lines 4-23, its "----" at 24), then runs steps (from line 26).
func withCRD(steps string) string { return "# s\n\n" + fooCRD + "\n" + steps }

// Custom resources' steps are refused at their line, with what is wrong:
// in the manifest, in the steps that name the resource, and (with
// apiextensions linked, as package sim/full links it) in what
// kube-apiserver would refuse of a write.
func TestCustomResourceErrors(t *testing.T) {
	scenario.LinkCustomResources(func(manifest []byte) (scenario.Admit, error) {
		d, err := crd.Compile(manifest)
		if err != nil {
			return nil, err
		}
		return d.Admit, nil
	})
	t.Cleanup(func() { scenario.LinkCustomResources(nil) })
	cases := []struct{ name, src, want string }{
		{"no manifest", "# s\n\ncrd\n----\n", `x.txt:3: crd wants a CustomResourceDefinition's manifest`},
		{"no end", "# s\n\ncrd\napiVersion: v1\n", `x.txt:3: the manifest after crd is never ended by a line "----"`},
		{"not YAML", "# s\n\ncrd\na: b\n  c: [\n----\n", `x.txt:5: crd: the manifest is not YAML`},
		{"not a CRD", "# s\n\ncrd\napiVersion: v1\nkind: ConfigMap\n----\n", `x.txt:4: crd: want apiVersion: apiextensions.k8s.io/v1 and kind: CustomResourceDefinition`},
		{"misnamed", strings.Replace(withCRD(""), "name: foos.example.com", "name: bars.example.com", 1), `x.txt:4: crd: metadata.name "bars.example.com": must be spec.names.plural+"."+spec.group, foos.example.com`},
		{"no scope", strings.Replace(withCRD(""), "scope: Namespaced", "scope: Everywhere", 1), `x.txt:4: crd: spec.scope "Everywhere": want Namespaced or Cluster`},
		{"a cluster-scoped object in a namespace", withCRD(clusterCRD + "\ncreate bars ns0/c\n----\n"), `x.txt:49: object "ns0/c": bars is cluster-scoped; name its objects without a namespace`},
		{"a cluster-scoped owner", withCRD(clusterCRD + "\ncreate bars c\n----\n\ncreate configmaps ns0/x owner=bars/ns0/c\n----\n"),
			`x.txt:52: create ns0/x owner=bars/ns0/c: bars is cluster-scoped, and owners of or by a cluster-scoped object are not modelled, so far`},
		{"a cluster-scoped informer in a namespace", withCRD(clusterCRD + "\nstart informer=bars namespace=ns0\n----\n"),
			`x.txt:49: start informer=bars: bars is cluster-scoped, and namespace=ns0: kube-apiserver serves no namespace's bars (404)`},
		{"a cluster-scoped informer of a namespaced factory", withCRD(clusterCRD + "\nfactory f namespace=ns0\n----\n\ninformer f bars\n----\n"),
			`x.txt:52: informer f bars: bars is cluster-scoped, and factory f namespace=ns0: kube-apiserver serves no namespace's bars (404)`},
		{"a built-in's plural", strings.NewReplacer("foos", "pods").Replace(withCRD("")), `x.txt:4: crd: spec.names.plural "pods": a scenario names resources by plural, and pods is a built-in one's`},
		{"not structural", strings.Replace(withCRD(""), "replicas: {type: integer, minimum: 0}", "replicas: {minimum: 0}", 1), `x.txt:4: crd foos.example.com: `},
		{"twice", withCRD(fooCRD), `x.txt:26: crd foos.example.com: a crd before this line defines foos already`},
		{"before its crd", "# s\n\ncreate foos ns0/f\n----\n", `x.txt:3: create foos: "foos" is not an object (ns/name) or, before the objects, a resource`},
		{"data= on a custom resource", withCRD("create foos ns0/f data=(a=b)\n----\n"), `x.txt:26: create foos: data= is not a field of foos; foos has labels=, spec=`},
		{"spec= on a built-in", withCRD("create configmaps ns0/c spec=(a=b)\n----\n"), `x.txt:26: create configmaps: spec= is not a field of configmaps; configmaps has labels=, data=`},
		{"bad field name", withCRD("create foos ns0/f spec=(a-b=1)\n----\n"), `x.txt:26: spec=(a-b=1): "a-b" is not a field name`},
		{"refused by the schema", withCRD("create foos ns0/f spec=(replicas=-1)\n----\n"),
			`x.txt:26: create foos ns0/f: kube-apiserver refuses it: Foo.example.com "f" is invalid: spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0`},
		{"an update refused", withCRD("create foos ns0/f\n----\n\nupdate foos ns0/f spec=(replicas=x)\n----\n"),
			`x.txt:29: update foos ns0/f: kube-apiserver refuses it: Foo.example.com "f" is invalid: spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"`},
		{"two custom kinds on one factory", withCRD(strings.NewReplacer("foos", "bars", "Foo", "Bar").Replace(fooCRD) +
			"\nfactory f\n----\n\ninformer f foos\n----\n\ninformer f bars\n----\n"),
			`x.txt:55: informer f bars: factory f has an informer of the custom resource foos already, and client-go's SharedInformerFactory keys an informer by its objects' Go type`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := scenario.Parse("x.txt", []byte(c.src))
			var pe *scenario.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("got %v, want a *ParseError", err)
			}
			if !strings.HasPrefix(err.Error(), c.want) {
				t.Errorf("got  %q\nwant %q...", err, c.want)
			}
		})
	}
	// The long name is the plural's; owner= and informer= take either
	// where they name a resource.
	src := withCRD("create foos.example.com ns0/f spec=(replicas=2)\n----\n\ncreate configmaps ns0/c owner=foos.example.com/ns0/f\n----\n\nstart informer=foos.example.com\n----\n")
	sc, err := scenario.Parse("x.txt", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"", "foos", "configmaps", "foos"} {
		a, _ := scenario.ParseArgs(sc.Steps[i])
		if a.Resource != want {
			t.Errorf("step %d: resource %q, want %q", i+1, a.Resource, want)
		}
	}
	// A cluster-scoped resource's objects are named alone.
	if _, err := scenario.Parse("x.txt", []byte(withCRD(clusterCRD+"\ncreate bars c1 spec=(replicas=1)\n----\n\nupdate bars c1 spec=(replicas=2)\n----\n\ndelete bars c1\n----\n"))); err != nil {
		t.Errorf("a cluster-scoped resource's life: %v", err)
	}
	if spec := func() map[string]any { a, _ := scenario.ParseArgs(sc.Steps[1]); return a.Spec() }(); spec["replicas"] != int64(2) {
		t.Errorf("spec=(replicas=2) of an integer field: %#v, want int64 2", spec)
	}
}

// A placement of a scenario with a crd step writes the manifest back
// between the step and its "----": explore's placed scenarios define the
// resource as the scenario does.
func TestPlacementKeepsTheManifest(t *testing.T) {
	sc, err := scenario.Parse("x.txt", []byte(withCRD("create foos ns0/f spec=(replicas=2)\n----\n")))
	if err != nil {
		t.Fatal(err)
	}
	text := scenario.Placement{Faults: []scenario.PlacedFault{{Kind: "compact", At: 2}}}.Text(sc, scenario.ServerEtcd, "", 0, nil)
	placed, err := scenario.Parse("x.explored.txt", []byte(text))
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	if len(placed.CustomResources) != 1 || string(placed.CustomResources[0].Manifest) != string(sc.CustomResources[0].Manifest) {
		t.Errorf("the placed scenario lost its manifest:\n%s", text)
	}
}
