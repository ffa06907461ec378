package trace

import (
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/store"
)

// canonicalByDefinition is Canonical as its doc comment defines it, the
// slow way: split into segments, sort each free batch's events with less.
func canonicalByDefinition(events []Event) []Event {
	var out []Event
	for _, s := range Segments(events) {
		es := slices.Clone(s.Events)
		if s.Order != "" {
			sort.SliceStable(es, func(i, j int) bool { return less(es[i], es[j]) })
		}
		out = append(out, es...)
	}
	return out
}

// Compare's one-pass agreement (sameUpToBatches) and Canonical's sorting
// by index must say what the definition says: two layers agree when their
// canonical forms are equal, and the canonical form is each batch sorted.
// The inputs are small layers drawn from a few values per field, and a
// second side made from the first by a shuffle within batches and a
// change or two, so that both answers come up often.
func FuzzCompareAgreesWithCanonical(f *testing.F) {
	for _, seed := range []uint64{1, 2, 3, 42, 1000} {
		f.Add(seed, uint8(0))
		f.Add(seed, uint8(3))
	}
	f.Fuzz(func(t *testing.T, seed uint64, changes uint8) {
		rnd := rand.New(rand.NewPCG(seed, uint64(changes)))
		pick := func(vals ...string) string { return vals[rnd.IntN(len(vals))] }
		event := func() Event {
			return Event{Layer: "handler/h", Kind: KindCall, Key: pick("ns/a", "ns/b", "ns/c"), RV: pick("1", "2"),
				UID: pick("", "u"), Op: pick("OnAdd", "OnUpdate"), Detail: pick("x", "y"),
				Order: Order(pick("", "", string(OrderListed), string(OrderTombstones)))}
		}
		a := make([]Event, rnd.IntN(12))
		for i := range a {
			a[i] = event()
		}
		b := slices.Clone(a)
		for i := 0; i < len(b); { // shuffle within each segment of b
			j := batchEnd(b, i)
			if b[i].Order != "" {
				rnd.Shuffle(j-i, func(x, y int) { b[i+x], b[i+y] = b[i+y], b[i+x] })
			}
			i = j
		}
		for range changes % 4 {
			switch n := len(b); {
			case n == 0:
				b = append(b, event())
			case rnd.IntN(3) == 0:
				i := rnd.IntN(n)
				b = slices.Delete(b, i, i+1)
			default:
				b[rnd.IntN(n)] = event()
			}
		}
		for _, x := range [][]Event{a, b} {
			if d := cmp.Diff(canonicalByDefinition(x), Canonical(x)); d != "" {
				t.Fatalf("Canonical differs from its definition (-want +got):\n%s", d)
			}
		}
		want := cmp.Equal(canonicalByDefinition(a), canonicalByDefinition(b))
		if got := sameUpToBatches(a, b); got != want {
			t.Fatalf("sameUpToBatches = %t, canonical forms equal = %t\na: %v\nb: %v", got, want, a, b)
		}
		if layer, _ := Compare(a, b, false); (layer == "") != want {
			t.Fatalf("Compare found layer %q; canonical forms equal = %t", layer, want)
		}
	})
}

// KeyOf and Describe read an Unstructured's metadata directly
// (metadataOf); they must say what its accessors say, for any shape of
// metadata, well-formed or not.
func TestMetadataOfIsTheAccessors(t *testing.T) {
	for _, md := range []any{
		nil, "not a map", map[string]any{},
		map[string]any{"name": "a"},
		map[string]any{"name": "a", "namespace": "ns", "resourceVersion": "7"},
		map[string]any{"name": 3, "namespace": []any{"x"}, "resourceVersion": 7},
	} {
		u := &unstructured.Unstructured{Object: map[string]any{"metadata": md}}
		if md == nil {
			u.Object = map[string]any{}
		}
		want := u.GetName() + "@" + u.GetResourceVersion()
		if ns := u.GetNamespace(); ns != "" {
			want = ns + "/" + want
		}
		if got := Describe(u); got != want {
			t.Errorf("metadata %v: Describe = %q, the accessors say %q", md, got, want)
		}
		if k, d := KeyAndDescribe(u); k != KeyOf(u) || d != Describe(u) {
			t.Errorf("metadata %v: KeyAndDescribe = %q, %q; KeyOf and Describe say %q, %q", md, k, d, KeyOf(u), Describe(u))
		}
	}
	for _, obj := range []any{nil, store.DeletedFinalStateUnknown{Key: "ns/a", Obj: &unstructured.Unstructured{}},
		cache.DeletedFinalStateUnknown{Key: "ns/b"}, &metav1.ObjectMeta{Name: "c", Namespace: "ns", ResourceVersion: "3"}} {
		if k, d := KeyAndDescribe(obj); k != KeyOf(obj) || d != Describe(obj) {
			t.Errorf("%T: KeyAndDescribe = %q, %q; KeyOf and Describe say %q, %q", obj, k, d, KeyOf(obj), Describe(obj))
		}
	}
}

// arrangeByDefinition is Arrange as its doc comment defines it, the slow
// way: a stable sort of the events themselves.
func arrangeByDefinition(events []Event) []Event {
	out := slices.Clone(events)
	MarkListed(out)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if ra, rb := printRank(a.Layer), printRank(b.Layer); ra != rb {
			return ra < rb
		}
		if a.Layer != b.Layer && printRank(a.Layer) != Rank(LayerWorkqueue) {
			return a.Layer < b.Layer
		}
		if a.Layer == LayerReflector {
			if ra, rb := strings.HasPrefix(a.Detail, "resync"), strings.HasPrefix(b.Detail, "resync"); ra != rb {
				return ra
			}
		}
		return false
	})
	return out
}

// Arrange sorts by index; it must put events where the definition does,
// for every mix of layers, including the two that share a rank and the
// reflector's resyncs.
func FuzzArrangeAsDefined(f *testing.F) {
	for _, seed := range []uint64{1, 2, 3, 42} {
		f.Add(seed)
	}
	layers := []string{LayerEtcd, LayerRequest, LayerWatch, LayerReflector, LayerTransform, LayerIndexer,
		LayerWorkqueue, LayerReconcile, LayerNote, "handler/a", "handler/b"}
	f.Fuzz(func(t *testing.T, seed uint64) {
		rnd := rand.New(rand.NewPCG(seed, 0))
		events := make([]Event, rnd.IntN(40))
		for i := range events {
			events[i] = Event{Layer: layers[rnd.IntN(len(layers))], Key: string(rune('a' + rnd.IntN(3))),
				Detail: []string{"resync", "x", "y"}[rnd.IntN(3)], Kind: KindCall}
			if rnd.IntN(4) == 0 {
				events[i].Kind, events[i].Initial = KindEvent, true
			}
		}
		if d := cmp.Diff(arrangeByDefinition(events), Arrange(events)); d != "" {
			t.Fatalf("Arrange differs from its definition (-want +got):\n%s", d)
		}
	})
}
