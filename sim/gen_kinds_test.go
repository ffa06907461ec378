package sim

import (
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cachelab/cachelab/sim/scenario"
)

// The generator's late steps over resources other than pods
// (genKindSteps): their own loose model, as gen's is of pods. A step it
// gets wrong (an object etcd-wipe took away) is one Parse refuses, and
// lateStep adds nothing then.

// genKinds is what the late steps know of the other resources.
type genKinds struct {
	on      int             // 0 until decided, then 1 (this scenario gets such steps) or more (it does not)
	objects map[string]bool // "<resource> <ns/name>" created and not deleted
	owned   bool            // an object was created with an owner
	crd     bool            // a crd step defined foos
}

func (k genKinds) clone() genKinds {
	k.objects = maps.Clone(k.objects)
	return k
}

var (
	genKindResources = []string{"configmaps", "secrets", "deployments"}
	genFinalizers    = []string{"(example.com/a)", "(example.com/a,example.com/b)"}
)

// createKind creates an object of another resource, now and then with
// finalizers, or owned by a deployment that exists.
func (g *gen) createKind() string {
	res := g.pick(g.kindResources())
	key := g.pick(genKeys)
	if !g.kinds.objects["deployments ns0/a"] && g.maybe(2) {
		res, key = "deployments", "ns0/a" // an owner for what follows
	}
	ref := res + " " + key
	line := "create " + ref
	switch res {
	case "configmaps", "secrets":
		line += " data=(k=v" + g.pick([]string{"1", "2"}) + ")"
	case "foos":
		line += " spec=(replicas=" + g.pick([]string{"1", "2"}) + ",size=big)"
	default:
		line += " replicas=" + g.pick([]string{"1", "3"})
	}
	if g.maybe(3) {
		line += " finalizers=" + g.pick(genFinalizers)
	}
	if owner := g.kindOwner(key); owner != "" && !g.maybe(4) {
		line += " owner=" + owner
		g.kinds.owned = true
	}
	if g.kinds.objects == nil {
		g.kinds.objects = map[string]bool{}
	}
	g.kinds.objects[ref] = true
	return line
}

// kindOwner is a deployment in key's namespace that could own it.
func (g *gen) kindOwner(key string) string {
	ns, _, _ := strings.Cut(key, "/")
	for _, ref := range slices.Sorted(maps.Keys(g.kinds.objects)) {
		owner, ok := strings.CutPrefix(ref, "deployments ")
		if ownerNS, _, _ := strings.Cut(owner, "/"); ok && ownerNS == ns && owner != key {
			return "deployments/" + owner
		}
	}
	return ""
}

func (g *gen) kindRef() string {
	refs := slices.Sorted(maps.Keys(g.kinds.objects))
	if len(refs) == 0 {
		return "configmaps ns0/a" // Parse refuses it
	}
	return g.pick(refs)
}

func (g *gen) updateKind() string {
	ref := g.kindRef()
	line := "update " + ref
	switch {
	case g.maybe(3):
		line += " finalizers=" + g.pick(append([]string{"()"}, genFinalizers...))
	case strings.HasPrefix(ref, "deployments "):
		line += " replicas=" + g.pick([]string{"0", "2", "5"})
	case strings.HasPrefix(ref, "foos "):
		line += " spec=(replicas=" + g.pick([]string{"0", "3"}) + ")"
	default:
		line += " data=(k=" + g.pick([]string{"v3", "v4"}) + ")"
	}
	return line
}

func (g *gen) deleteKind() string {
	ref := g.kindRef()
	delete(g.kinds.objects, ref) // finalizers may keep it: a later update of it is then still accepted, or not
	return "delete " + ref
}

func (g *gen) informerKind() string {
	return "informer " + g.factoryName(g.factories) + " " + g.pick(g.kindResources())
}

// kindResources are the resources the late steps write and watch:
// foos too, once a crd step has defined it.
func (g *gen) kindResources() []string {
	if g.kinds.crd {
		return append(slices.Clone(genKindResources), "foos")
	}
	return genKindResources
}

// crd defines foos.example.com: a custom resource whose spec.replicas
// is an integer of at least 0, defaulted to 1 (size= is pruned).
func (g *gen) crd() string {
	g.kinds.crd = true
	return "crd\n" + genFooCRD
}

const genFooCRD = `apiVersion: apiextensions.k8s.io/v1
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
              replicas: {type: integer, minimum: 0, default: 1}`

// The corpus (fuzzSeeds, testdata/fuzz) keeps the scenarios it was
// chosen for: none of them gets a step over another resource, but those
// added for such steps (kinds-*); and the generator does write such
// steps, gc among them, into other scenarios, which Parse accepts.
func TestGenKindSteps(t *testing.T) {
	kindStep := regexp.MustCompile(`(?m)^(create|update|delete|informer \S+) (configmaps|secrets|deployments|foos)\b|^gc$|^crd$`)
	kinds := 0
	for _, c := range corpusSeeds(t) {
		text := genScenario(rand.New(rand.NewPCG(c.seed, 0)))
		switch has := kindStep.MatchString(text); {
		case c.kinds && has:
			kinds++
		case c.kinds:
			t.Errorf("%s: seed %d has no step over another resource, which it was added for\n%s", c.name, c.seed, text)
		case has:
			t.Errorf("%s: seed %d of the corpus now has a step over another resource: choose another kindSalt\n%s", c.name, c.seed, text)
		}
	}
	if kinds == 0 {
		t.Error("no seed of the corpus has steps over other resources (testdata/fuzz/FuzzRunner/kinds-*)")
	}
	with, gc := 0, 0
	for seed := uint64(0); seed < 400; seed++ {
		text := genScenario(rand.New(rand.NewPCG(seed, 0)))
		if _, err := scenario.Parse("gen.txt", []byte(text)); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if kindStep.MatchString(text) {
			with++
		}
		if strings.Contains(text, "\ngc\n") {
			gc++
		}
	}
	if with < 20 || gc == 0 {
		t.Errorf("of 400 scenarios, %d have steps over other resources and %d a gc: the late steps are too rare to test anything", with, gc)
	}
}

// corpusSeed is a seed of FuzzRunner's corpus: where it is, and whether
// it was added for its steps over other resources (a file kinds-*).
type corpusSeed struct {
	name  string
	seed  uint64
	kinds bool
}

// corpusSeeds are the seeds of FuzzRunner's corpus: fuzzSeeds, and the
// files under testdata/fuzz/FuzzRunner.
func corpusSeeds(t *testing.T) []corpusSeed {
	var seeds []corpusSeed
	for _, s := range fuzzSeeds {
		seeds = append(seeds, corpusSeed{name: "fuzzSeeds", seed: s.seed})
	}
	files, err := filepath.Glob("testdata/fuzz/FuzzRunner/*")
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus files: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "uint64("); ok {
				n, err := strconv.ParseUint(strings.TrimSuffix(v, ")"), 10, 64)
				if err != nil {
					t.Fatalf("%s: %q", f, l)
				}
				seeds = append(seeds, corpusSeed{filepath.Base(f), n, strings.HasPrefix(filepath.Base(f), "kinds-")})
			}
		}
	}
	return seeds
}
