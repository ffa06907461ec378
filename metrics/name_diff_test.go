package metrics_test

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/internal/difftest"
	"github.com/cachelab/cachelab/internal/meter"
	"github.com/cachelab/cachelab/metrics"
)

// registry is what the script needs of either implementation's names.
type registry struct {
	reserve func(name string) (handle int, err error) // -1 on error
	pair    func(handle int, gvr schema.GroupVersionResource) (pairHandle int)
	release func(handle int)
	state   func(pairHandle int) string // name, resource, Reserved
}

func clRegistry() registry {
	var names []*metrics.InformerName
	var pairs []metrics.InformerNameAndResource
	return registry{
		reserve: func(name string) (int, error) {
			n, err := metrics.NewInformerName(name)
			names = append(names, n) // nil on error: a nil name is usable
			return len(names) - 1, err
		},
		pair: func(h int, gvr schema.GroupVersionResource) int {
			pairs = append(pairs, names[h].WithResource(gvr))
			return len(pairs) - 1
		},
		release: func(h int) { names[h].Release() },
		state: func(p int) string {
			id := pairs[p]
			return fmt.Sprintf("name=%q resource=%s reserved=%v", id.Name(), id.GroupVersionResource(), id.Reserved())
		},
	}
}

func cgRegistry() registry {
	var names []*cache.InformerName
	var pairs []cache.InformerNameAndResource
	return registry{
		reserve: func(name string) (int, error) {
			n, err := cache.NewInformerName(name)
			names = append(names, n)
			return len(names) - 1, err
		},
		pair: func(h int, gvr schema.GroupVersionResource) int {
			pairs = append(pairs, names[h].WithResource(gvr))
			return len(pairs) - 1
		},
		release: func(h int) { names[h].Release() },
		state: func(p int) string {
			id := pairs[p]
			return fmt.Sprintf("name=%q resource=%s reserved=%v", id.Name(), id.GroupVersionResource(), id.Reserved())
		},
	}
}

// client-go: identity.go NewInformerName, WithResource, Release (P20)
//
// The same script runs on both registries (each process-wide, separate
// from the other); every result and every pair's state after every step
// is compared. The names carry the test's name so that no other test can
// hold them.
func TestInformerNames(t *testing.T) {
	pods := meter.PodsGVR
	nodes := schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
	a, b := t.Name()+"-a", t.Name()+"-b"
	script := func(r registry) []string {
		var out []string
		var pairs []int
		say := func(step string) {
			line := step + ":"
			for _, p := range pairs {
				line += " [" + r.state(p) + "]"
			}
			out = append(out, line)
		}
		errOf := func(_ int, err error) string { return fmt.Sprint(err) }
		out = append(out, "empty name: "+errOf(r.reserve("")))
		na, _ := r.reserve(a)
		out = append(out, "a again: "+errOf(r.reserve(a)))
		pairs = append(pairs, r.pair(na, pods))
		pairs = append(pairs, r.pair(na, pods)) // a duplicate: not reserved, logged
		pairs = append(pairs, r.pair(na, nodes))
		say("a with pods, pods, nodes")
		nilName, _ := r.reserve("") // a nil InformerName: pairs are never reserved
		pairs = append(pairs, r.pair(nilName, pods))
		say("nil name with pods")
		r.release(na)
		say("a released")
		pairs = append(pairs, r.pair(na, pods))
		say("released a with pods")
		na2, err := r.reserve(a)
		out = append(out, "a reserved again: "+fmt.Sprint(err))
		pairs = append(pairs, r.pair(na2, pods))
		say("new a with pods")
		// The quirk: releasing the old a again frees the new holder's
		// name in the registry, though its pairs stay reserved.
		r.release(na)
		out = append(out, "a after the old one's second release: "+errOf(r.reserve(a)))
		say("end")
		nb, _ := r.reserve(b)
		r.release(nb)
		r.release(nb)
		return out
	}
	// Leave nothing reserved for other tests, on either side.
	t.Cleanup(func() { metrics.ReleaseAll(); cache.ResetInformerNamesForTesting() })
	cl, cg := script(clRegistry()), script(cgRegistry())
	if d := difftest.Diff(cl, cg); d != "" {
		t.Fatalf("informer names (-client-go +cachelab):\n%s", d)
	}
	for _, line := range cl {
		t.Log(line)
	}
}
