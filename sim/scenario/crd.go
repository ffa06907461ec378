package scenario

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// Custom resources: a crd step gives a CustomResourceDefinition's
// manifest on the lines between it and its "----", and from the next
// step on the scenario names the resource by its plural, as it names
// pods or configmaps:
//
//	crd
//	apiVersion: apiextensions.k8s.io/v1
//	kind: CustomResourceDefinition
//	metadata:
//	  name: foos.example.com
//	spec:
//	  group: example.com
//	  ...
//	----
//
//	create foos ns0/f spec=(replicas=2)
//
// What kube-apiserver does with a custom resource's writes (pruning the
// fields its schema does not know, defaulting, validating against the
// schema) is apiextensions-apiserver's own code, which package sim/full
// links in (LinkCustomResources): with it linked, Parse refuses a write
// the server would refuse, at its line.

// CustomResource is a resource a crd step defines.
type CustomResource struct {
	Group, Version   string
	Plural, Singular string
	Kind             string
	Namespaced       bool
	// Manifest is the CustomResourceDefinition as JSON.
	Manifest []byte
	// Line is the crd step's.
	Line int
	// specTypes are the types the schema gives spec's fields, for the
	// values spec= writes.
	specTypes map[string]string
	admit     Admit
}

// Name is the custom resource as its CustomResourceDefinition is named:
// "foos.example.com".
func (c CustomResource) Name() string { return c.Plural + "." + c.Group }

// Admit is what kube-apiserver does to a custom resource's object before
// it stores it: it prunes, defaults and validates obj (a create's, old
// nil, or an update's, old the stored one) in place, and returns the
// server's refusal (its 422, as kubectl prints it), or nil.
type Admit func(obj, old map[string]any) error

// admitter compiles a CustomResourceDefinition's manifest (JSON) into
// its Admit, or says why kube-apiserver would refuse it.
var admitter func(manifest []byte) (Admit, error)

// LinkCustomResources makes Parse check custom resources' writes as
// kube-apiserver does: package sim/full links apiextensions-apiserver's
// validation in. A build without it parses their steps unchecked, and
// the run (which needs sim/full for them) checks them again.
func LinkCustomResources(compile func(manifest []byte) (Admit, error)) { admitter = compile }

// crdManifest is what Parse reads of a CustomResourceDefinition itself;
// the rest goes to the world as Manifest.
type crdManifest struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Group string `json:"group"`
		Scope string `json:"scope"`
		Names struct {
			Plural   string `json:"plural"`
			Singular string `json:"singular"`
			Kind     string `json:"kind"`
		} `json:"names"`
		Versions []struct {
			Name    string `json:"name"`
			Served  bool   `json:"served"`
			Storage bool   `json:"storage"`
			Schema  *struct {
				OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
			} `json:"schema"`
		} `json:"versions"`
	} `json:"spec"`
}

// yamlLine finds the line a YAML error names ("yaml: line 5: ...").
var yamlLine = regexp.MustCompile(`line (\d+):`)

// parseCRD reads a crd step's manifest, whose first line is the file's
// line first. Its errors name the file's line where the YAML parser
// names one.
func parseCRD(text string, first int) (CustomResource, int, error) {
	var c CustomResource
	js, err := yaml.YAMLToJSON([]byte(text))
	if err != nil {
		line := first
		if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
			n, _ := strconv.Atoi(m[1])
			line = first + n - 1
		}
		return c, line, fmt.Errorf("crd: the manifest is not YAML: %v", err)
	}
	var m crdManifest
	if err := json.Unmarshal(js, &m); err != nil {
		return c, first, fmt.Errorf("crd: the manifest is not a CustomResourceDefinition: %v", err)
	}
	c, err = customResourceOf(m)
	if err != nil {
		return c, first, fmt.Errorf("crd: %v", err)
	}
	c.Manifest = js
	if admitter != nil {
		if c.admit, err = admitter(js); err != nil {
			return c, first, fmt.Errorf("crd %s: %v", c.Name(), err)
		}
	}
	return c, first, nil
}

// customResourceOf checks what the simulator needs of a
// CustomResourceDefinition, and what it does not serve yet.
func customResourceOf(m crdManifest) (CustomResource, error) {
	var c CustomResource
	s := m.Spec
	switch {
	case m.APIVersion != "apiextensions.k8s.io/v1" || m.Kind != "CustomResourceDefinition":
		return c, fmt.Errorf("want apiVersion: apiextensions.k8s.io/v1 and kind: CustomResourceDefinition, not %q and %q", m.APIVersion, m.Kind)
	case s.Names.Plural == "" || s.Names.Kind == "":
		return c, fmt.Errorf("spec.names needs plural and kind")
	case len(validation.IsDNS1035Label(s.Names.Plural)) > 0:
		return c, fmt.Errorf("spec.names.plural %q: %s", s.Names.Plural, strings.Join(validation.IsDNS1035Label(s.Names.Plural), "; "))
	case !strings.Contains(s.Group, ".") || len(validation.IsDNS1123Subdomain(s.Group)) > 0:
		return c, fmt.Errorf("spec.group %q: a custom resource's group is a DNS subdomain with at least one dot, such as example.com", s.Group)
	case m.Metadata.Name != s.Names.Plural+"."+s.Group:
		return c, fmt.Errorf("metadata.name %q: must be spec.names.plural+\".\"+spec.group, %s", m.Metadata.Name, s.Names.Plural+"."+s.Group)
	case s.Scope != "Namespaced" && s.Scope != "Cluster":
		return c, fmt.Errorf("spec.scope %q: want Namespaced or Cluster", s.Scope)
	case len(s.Versions) != 1 || !s.Versions[0].Served || !s.Versions[0].Storage:
		return c, fmt.Errorf("spec.versions: want one version, served and stored (the simulator converts between none)")
	case s.Versions[0].Schema == nil || s.Versions[0].Schema.OpenAPIV3Schema == nil:
		return c, fmt.Errorf("spec.versions[0].schema.openAPIV3Schema: apiextensions.k8s.io/v1 wants a schema for every version")
	case IsResource(s.Names.Plural):
		return c, fmt.Errorf("spec.names.plural %q: a scenario names resources by plural, and %s is a built-in one's", s.Names.Plural, s.Names.Plural)
	}
	singular := s.Names.Singular
	if singular == "" {
		singular = strings.ToLower(s.Names.Kind)
	}
	c = CustomResource{Group: s.Group, Version: s.Versions[0].Name, Plural: s.Names.Plural, Singular: singular,
		Kind: s.Names.Kind, Namespaced: s.Scope == "Namespaced", specTypes: specTypes(s.Versions[0].Schema.OpenAPIV3Schema)}
	return c, nil
}

// specTypes are the types a schema gives spec's own fields.
func specTypes(schema map[string]any) map[string]string {
	out := map[string]string{}
	props, _ := schema["properties"].(map[string]any)
	spec, _ := props["spec"].(map[string]any)
	fields, _ := spec["properties"].(map[string]any)
	for k, v := range fields {
		f, _ := v.(map[string]any)
		out[k], _ = f["type"].(string)
	}
	return out
}

// Object is a custom resource's object as a create makes it under key
// (ns/name, or a name alone for a cluster-scoped one), with spec (the
// fields spec= gives, SpecValues).
func (c CustomResource) Object(key string, spec map[string]any) map[string]any {
	ns, name := SplitKey(key)
	md := map[string]any{"name": name}
	if ns != "" {
		md["namespace"] = ns
	}
	obj := map[string]any{
		"apiVersion": c.Group + "/" + c.Version,
		"kind":       c.Kind,
		"metadata":   md,
	}
	if spec != nil {
		obj["spec"] = spec
	}
	return obj
}

// SplitKey is an object's key as its namespace and name: ns/name, or a
// cluster-scoped object's name alone (its namespace "").
func SplitKey(key string) (ns, name string) {
	ns, name, ok := strings.Cut(key, "/")
	if !ok {
		return "", key
	}
	return ns, name
}

// SpecValues is spec=(k=v,...) typed by c's schema, the value of a field
// the schema types as an integer, a number or a boolean one where it
// reads as one; every other is a string, for the server to refuse or
// prune.
func (c CustomResource) SpecValues(pairs map[string]string) map[string]any {
	out := make(map[string]any, len(pairs))
	for k, v := range pairs {
		out[k] = c.typed(k, v)
	}
	return out
}

func (c CustomResource) typed(field, v string) any {
	switch c.specTypes[field] {
	case "integer":
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			return n
		}
	case "number":
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			return n
		}
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			return f
		}
	case "boolean":
		if b, err := strconv.ParseBool(v); err == nil {
			return b
		}
	}
	return v
}

// Admit is kube-apiserver's handling of obj (LinkCustomResources), or
// nil in a build that does not link it.
func (c CustomResource) Admit() Admit { return c.admit }

// customNamed is the custom resource a scenario names name, among cs.
func customNamed(cs []CustomResource, name string) (CustomResource, bool) {
	i := slices.IndexFunc(cs, func(c CustomResource) bool { return c.Plural == name })
	if i < 0 {
		return CustomResource{}, false
	}
	return cs[i], true
}

// ParseCRD reads a CustomResourceDefinition manifest (YAML or JSON) as a
// crd step reads its own, for a world given one outside a scenario.
func ParseCRD(manifest string) (CustomResource, error) {
	c, _, err := parseCRD(manifest, 1)
	return c, err
}
