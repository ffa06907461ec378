package scenario

import (
	"fmt"
	"slices"
	"strings"
)

// Resources are the resources a scenario can write and watch, by the
// name kube-apiserver gives them (plural, lower case), pods first: every
// world of the run's own serves each of them. A write names its
// resource before its objects (create configmaps ns0/cfg), informer after
// its factory (informer a configmaps); a step that names none means pods,
// so every scenario written before there were others reads as it did.
// They are spelled here again, not taken from package listwatch, because
// a scenario is data and does not depend on the world's code;
// TestResourcesAreBuiltIn (package sim) holds the two to the same names.
var Resources = []string{"pods", "configmaps", "secrets", "deployments"}

// DefaultResource is the resource of a step that names none.
const DefaultResource = "pods"

// resourceAt is, for each command that may name a resource, where among
// its positional arguments the name stands.
var resourceAt = map[string]int{"create": 0, "update": 0, "delete": 0, "informer": 1}

// IsResource reports whether name is one of Resources.
func IsResource(name string) bool { return slices.Contains(Resources, name) }

// takeResource takes the resource a step of command name names out of
// its positional arguments. For a write, a first word that is not an
// object's ns/name is meant as a resource; for informer, a second word.
func takeResource(name string, a *Args) error {
	if name == "start" || name == "start-queue" {
		a.Resource = DefaultResource
		if v, ok := a.Value("informer"); ok {
			a.Resource = v // checkValue says it is one
			if c, ok := a.customByName(v); ok {
				a.Resource = c.Plural
			}
		}
		return nil
	}
	at, ok := resourceAt[name]
	if !ok {
		return nil
	}
	a.Resource = DefaultResource
	if len(a.Pos) <= at {
		return nil
	}
	word := a.Pos[at]
	if name != "informer" && (strings.Contains(word, "/") || !a.isResource(word) && len(a.Pos) == 1) {
		return nil // an object, or a word meant as one: checkKey says what is wrong with it
	}
	if c, ok := a.customByName(word); ok {
		word = c.Plural // foos.example.com is foos
	}
	if !a.isResource(word) {
		return unknownResource(name, word, a.resources())
	}
	a.Resource = word
	a.Pos = slices.Delete(slices.Clone(a.Pos), at, at+1)
	return nil
}

// unknownResource is the error for a word that stands where a resource
// does and is none.
func unknownResource(cmd, word, resources string) error {
	what := "a resource"
	if cmd != "informer" {
		what = "an object (ns/name) or, before the objects, a resource"
	}
	if near := meantResource(word); near != "" {
		return fmt.Errorf("%s %s: %q is not %s; did you mean %s? (the resources are %s)", cmd, word, word, what, near, resources)
	}
	return fmt.Errorf("%s %s: %q is not %s; the resources are %s", cmd, word, word, what, resources)
}

// meantResource is the resource a word names in kubectl's other
// spellings (a singular, "deployments.apps", a kind), or "".
func meantResource(word string) string {
	base, _, _ := strings.Cut(strings.ToLower(word), ".")
	for _, w := range []string{base, base + "s"} {
		if IsResource(w) {
			return w
		}
	}
	return ""
}

// InformerRef is a factory's informer as informer= names it: the
// factory's name, with "/<resource>" after it for an informer of a
// resource other than pods ("a", "a/configmaps").
func InformerRef(v string) (factory, resource string) {
	factory, resource, ok := strings.Cut(v, "/")
	if !ok {
		resource = DefaultResource
	}
	return factory, resource
}

// checkInformerRef checks informer=<factory>[/<resource>].
func checkInformerRef(v string, a Args) error {
	f, res, named := strings.Cut(v, "/")
	if err := checkWord("factory", f); err != nil {
		return err
	}
	if _, custom := customNamed(a.custom, res); named && !IsResource(res) && !custom {
		return fmt.Errorf("informer=%s: %q is not a resource; the resources are %s", v, res, a.resources())
	}
	return nil
}

// ObjectRef is how the dry run and errors name an object of a resource:
// its key alone for a pod, as every scenario before other resources did,
// else "<resource> <key>".
func ObjectRef(resource, key string) string {
	if resource == "" || resource == DefaultResource {
		return key
	}
	return resource + " " + key
}
