package store_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/tools/cache"

	. "github.com/cachelab/cachelab/internal/difftest"
	"github.com/cachelab/cachelab/store"
)

var (
	ax1  = Pod("a/x", RV(1), Label("app", "web"))
	ax2  = Pod("a/x", RV(2), Label("app", "db"))
	ay3  = Pod("a/y", RV(3), Label("app", "web"))
	bx4  = Pod("b/x", RV(4))
	c5   = Pod("c", RV(5), Label("app", "web"), Label("tier", "front"))
	norv = Pod("a/z", Label("app", "web"))
)

func op(kind string, obj any) StoreOp { return StoreOp{Kind: kind, Obj: obj} }

func run(t *testing.T, cfg StoreConfig, ops []StoreOp, want ...string) {
	t.Helper()
	got := RunStoreScript(t, cfg, ops)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("transcript (-want +got):\n%s\ngot:\n\t%s", d, strings.Join(got, "\n\t"))
	}
}

// client-go: store.go MetaNamespaceKeyFunc, SplitMetaNamespaceKey;
// controller.go DeletionHandlingMetaNamespaceKeyFunc (S1)
func TestKeyFunctions(t *testing.T) {
	type pair struct{ cl, cg any }
	inputs := []pair{
		{ax1, ax1}, {c5, c5}, {nil, nil}, {Bad(1), Bad(1)}, {"a string", "a string"},
		{store.ExplicitKey("ns/explicit"), cache.ExplicitKey("ns/explicit")},
		{store.DeletedFinalStateUnknown{Key: "t/k", Obj: ax1}, cache.DeletedFinalStateUnknown{Key: "t/k", Obj: ax1}},
	}
	for i, in := range inputs {
		for _, f := range []struct {
			name   string
			cl, cg func(any) (string, error)
		}{
			{"MetaNamespaceKeyFunc", store.MetaNamespaceKeyFunc, cache.MetaNamespaceKeyFunc},
			{"DeletionHandlingMetaNamespaceKeyFunc", store.DeletionHandlingMetaNamespaceKeyFunc, cache.DeletionHandlingMetaNamespaceKeyFunc},
		} {
			a, aErr := f.cl(in.cl)
			b, bErr := f.cg(in.cg)
			if a != b || NormErr(aErr) != NormErr(bErr) {
				t.Errorf("%s(input %d): cachelab (%q, %v), client-go (%q, %v)", f.name, i, a, aErr, b, bErr)
			}
		}
	}
	for _, key := range []string{"a", "a/b", "a/b/c", "", "/", "a/", "/b"} {
		ns1, n1, e1 := store.SplitMetaNamespaceKey(key)
		ns2, n2, e2 := cache.SplitMetaNamespaceKey(key)
		if ns1 != ns2 || n1 != n2 || NormErr(e1) != NormErr(e2) {
			t.Errorf("SplitMetaNamespaceKey(%q): cachelab (%q, %q, %v), client-go (%q, %q, %v)", key, ns1, n1, e1, ns2, n2, e2)
		}
	}
}

// client-go: store.go cache, thread_safe_store.go threadSafeMap (S2)
func TestStoreCRUD(t *testing.T) {
	run(t, StoreConfig{}, []StoreOp{
		op("add", ax1), op("add", ay3), op("update", ax2), op("get", ax1),
		{Kind: "getbykey", Key: "a/y"}, {Kind: "getbykey", Key: "nope"},
		op("delete", ay3), op("delete", ay3), op("list", nil), op("listkeys", nil),
		{Kind: "replace", List: []any{bx4, c5, Pod("c", RV(6))}, RV: "9"}, op("list", nil), op("resync", nil),
	},
		"add a/x@1 → ok", "add a/y@3 → ok", "update a/x@2 → ok", "get a/x@1 → a/x@2",
		"getbykey a/y → a/y@3", "getbykey nope → not found",
		"delete a/y@3 → ok", "delete a/y@3 → ok", "list → [a/x@2]", "listkeys → [a/x]",
		`replace [b/x@4 c@5 c@6] rv="9" → ok`, "list → [b/x@4 c@6]", "resync → ok",
	)
}

// client-go: store.go Add, Replace with a transformer (S2)
func TestStoreTransformer(t *testing.T) {
	run(t, StoreConfig{Transform: true}, []StoreOp{
		op("add", ax1), op("update", ax2), op("delete", ax2),
		{Kind: "replace", List: []any{bx4, ay3}, RV: "5"}, op("list", nil),
		op("add", Pod("a/q", Label(LabelTransformFails, "y"))),
		{Kind: "replace", List: []any{c5, Pod("a/q", Label(LabelTransformFails, "y"))}, RV: "6"}, op("list", nil),
	},
		"add a/x@1 → ok", "update a/x@2 → ok", "delete a/x@2 → ok",
		`replace [b/x@4 a/y@3] rv="5" → ok`, "list → [a/y@3+t1 b/x@4+t1]",
		"add a/q@ → error: error: transforming: transform refused a/q",
		`replace [c@5 a/q@] rv="6" → error: error: transforming: transform refused a/q`,
		"list → [a/y@3+t1 b/x@4+t1]",
	)
}

// client-go: thread_safe_store.go storeIndex, index.go (S3)
func TestStoreIndices(t *testing.T) {
	run(t, StoreConfig{}, []StoreOp{
		op("add", ax1), op("add", ay3), op("add", c5), op("add", bx4),
		{Kind: "byindex", Index: "app", Value: "web"},
		{Kind: "indexkeys", Index: "app", Value: "web"},
		{Kind: "index", Index: "app", Obj: Pod("q", Label("app", "web"))},
		{Kind: "index", Index: "namespace", Obj: Pod("a/q")},
		{Kind: "listvalues", Index: "app"},
		op("update", ax2),
		{Kind: "listvalues", Index: "app"},
		{Kind: "byindex", Index: "app", Value: "db"},
		{Kind: "byindex", Index: "missing", Value: "web"},
		{Kind: "indexkeys", Index: "missing", Value: "web"},
		{Kind: "index", Index: "missing", Obj: ax1},
		{Kind: "listvalues", Index: "missing"},
		{Kind: "addindexers", Index: "labels"},
		{Kind: "byindex", Index: "labels", Value: "front"},
		{Kind: "addindexers", Index: "app"},
		{Kind: "index", Index: "labels", Obj: c5},
		op("delete", c5),
		{Kind: "listvalues", Index: "labels"},
	},
		"add a/x@1 → ok", "add a/y@3 → ok", "add c@5 → ok", "add b/x@4 → ok",
		"byindex app=web → [a/x@1 a/y@3 c@5]",
		"indexkeys app=web → [a/x a/y c]",
		"index app q@ → [a/x@1 a/y@3 c@5]",
		"index namespace a/q@ → [a/x@1 a/y@3]",
		"listvalues app → [web]",
		"update a/x@2 → ok",
		"listvalues app → [db web]",
		"byindex app=db → [a/x@2]",
		"byindex missing=web → error: error: Index with name missing does not exist",
		"indexkeys missing=web → error: error: Index with name missing does not exist",
		"index missing a/x@1 → error: error: Index with name missing does not exist",
		"listvalues missing → []",
		"addindexers labels → ok",
		"byindex labels=front → [c@5]",
		"addindexers app → error: error: indexer conflict: map[app:{}]",
		"index labels c@5 → [a/y@3 c@5]",
		"delete c@5 → ok",
		"listvalues labels → [db web]",
	)
}

// An IndexFunc that fails while storing is a broken invariant: both
// panic, and both leave the items and the resourceVersion as client-go's
// updateLocked, Replace and Transaction do: the object is stored before
// it is indexed, a Replace swaps the items and the RV before it
// re-indexes, and a transaction keeps the entries before the failing one
// (RunStoreScript compares them after the panic; the indices are left as
// far as they got, in client-go in map order).
// client-go: thread_safe_store.go updateLocked, Replace, Transaction,
// updateSingleIndex (S3)
func TestStoreIndexFuncPanics(t *testing.T) {
	bad := Pod("a/bad", RV(7), Label(LabelIndexFails, "y"))
	for _, ops := range [][]StoreOp{
		{op("add", ax1), op("add", bad)},
		{op("add", ax1), op("update", ax1), op("update", bad)},
		{op("add", ax1), {Kind: "replace", List: []any{ay3, bad}, RV: "8"}},
		{op("add", ax1), {Kind: "transaction", Txns: []Txn{TAdd(ay3), TAdd(bad)}}},
	} {
		got := RunStoreScript(t, StoreConfig{}, ops)
		if last := got[len(got)-1]; !strings.HasSuffix(last, "→ panic") {
			t.Errorf("last step %q did not panic", last)
		}
	}
	c := store.New(store.Options{Indexers: store.Indexers{"app": IndexByApp}})
	_ = c.Add(ax1)
	msg := CatchPanic(func() { _ = c.Add(bad) })
	if !strings.Contains(msg, `"a/bad"`) || !strings.Contains(msg, `"app"`) {
		t.Errorf("panic message %q does not name the key and the index", msg)
	}
}

// client-go: thread_safe_store.go Update, DeleteWithObject, Replace, Bookmark (S4)
func TestStoreResourceVersion(t *testing.T) {
	run(t, StoreConfig{DeletionHandling: true}, []StoreOp{
		op("rv", nil), op("add", ax1), op("rv", nil), op("add", norv), op("rv", nil),
		op("add", ay3), op("delete", bx4), op("rv", nil),
		op("delete", Tomb{Key: "a/y"}), op("rv", nil),
		{Kind: "bookmark", RV: "42"}, op("rv", nil),
		{Kind: "replace", List: []any{c5}, RV: "50"}, op("rv", nil),
		{Kind: "replace", List: []any{}, RV: ""}, op("rv", nil),
		{Kind: "transaction", Txns: []Txn{TAdd(ax1), TDelete(ay3)}}, op("rv", nil),
	},
		`rv → ""`, "add a/x@1 → ok", `rv → "1"`, "add a/z@ → ok", `rv → ""`,
		"add a/y@3 → ok", "delete b/x@4 → ok", `rv → "4"`,
		// The tombstone has no metadata: the RV stays.
		"delete Tombstone(a/y: nil) → ok", `rv → "4"`,
		`bookmark rv="42" → ok`, `rv → "42"`,
		`replace [c@5] rv="50" → ok`, `rv → "50"`,
		`replace [] rv="" → ok`, `rv → ""`,
		"transaction [Add a/x@1, Delete a/y@3] → ok", `rv → "3"`,
	)
}

// With client-go's AtomicFIFO gate off, the RV is not reported.
// client-go: thread_safe_store.go LastStoreSyncResourceVersion (S4)
func TestStoreResourceVersionGateOff(t *testing.T) {
	clientfeaturestesting.SetFeatureDuringTest(t, features.AtomicFIFO, false)
	run(t, StoreConfig{HideRV: true}, []StoreOp{op("add", ax1), op("rv", nil), {Kind: "bookmark", RV: "9"}, op("rv", nil)},
		"add a/x@1 → ok", `rv → ""`, `bookmark rv="9" → ok`, `rv → ""`)
}

// client-go: store.go Transaction, thread_safe_store.go Transaction (S5)
func TestStoreTransaction(t *testing.T) {
	run(t, StoreConfig{Transform: true}, []StoreOp{
		op("add", ax1),
		{Kind: "transaction", Txns: []Txn{TUpdate(ax2), TAdd(Bad(1)), TAdd(ay3), TDelete(Bad(2)), TDelete(ax2)}},
		op("list", nil), op("rv", nil),
		{Kind: "transaction", Txns: []Txn{}},
		{Kind: "transaction", Txns: []Txn{TAdd(Bad(3))}}, op("rv", nil),
	},
		"add a/x@1 → ok",
		"transaction [Update a/x@2, Add difftest.BadObject{ID:1}, Add a/y@3, Delete difftest.BadObject{ID:2}, Delete a/x@2] → "+
			"error: error: failed to execute (2/5) transactions failed due to: "+
			"[couldn't create key for object {ID:1}: object has no meta: object does not implement the Object interfaces "+
			"couldn't create key for object {ID:2}: object has no meta: object does not implement the Object interfaces]",
		// Transaction entries are not transformed (a/y@3 has no +t1).
		"list → [a/y@3]", `rv → "2"`,
		"transaction [] → ok",
		"transaction [Add difftest.BadObject{ID:3}] → error: error: failed to execute (1/1) transactions failed due to: "+
			"[couldn't create key for object {ID:3}: object has no meta: object does not implement the Object interfaces]",
		`rv → "2"`,
	)
}

// Bad input: client-go's errors, nothing stored.
func TestStoreBadInput(t *testing.T) {
	const noMeta = "object has no meta: object does not implement the Object interfaces"
	run(t, StoreConfig{}, []StoreOp{
		op("add", nil), op("update", Bad(1)), op("delete", Bad(2)), op("get", nil),
		{Kind: "replace", List: []any{ax1, Bad(3)}, RV: "3"}, op("list", nil),
	},
		"add nil → error: KeyError: couldn't create key for object <nil>: "+noMeta,
		"update difftest.BadObject{ID:1} → error: KeyError: couldn't create key for object {ID:1}: "+noMeta,
		"delete difftest.BadObject{ID:2} → error: KeyError: couldn't create key for object {ID:2}: "+noMeta,
		"get nil → error: KeyError: couldn't create key for object <nil>: "+noMeta,
		`replace [a/x@1 difftest.BadObject{ID:3}] rv="3" → error: KeyError: couldn't create key for object {ID:3}: `+noMeta,
		"list → []",
	)
}

// client-go: thread_safe_store.go storeIndex.addIndexers, GetIndexers,
// AddIndexers (S3): the store keeps the Indexers map it was made with,
// AddIndexers adds to that map (the caller sees the new names), and
// GetIndexers returns it, not a copy. An IndexFunc that panics in
// AddIndexers leaves the new functions registered.
func TestIndexersMapIsTheCallers(t *testing.T) {
	clMap, cgMap := store.Indexers{"app": IndexByApp}, cache.Indexers{"app": IndexByApp}
	cl := store.New(store.Options{Indexers: clMap})
	cg := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cgMap)
	type seen struct{ Callers, Got []string }
	look := func() (a, b seen) {
		return seen{names(clMap), names(cl.GetIndexers())}, seen{names(cgMap), names(cg.GetIndexers())}
	}
	compare := func(step string) {
		t.Helper()
		a, b := look()
		if d := cmp.Diff(b, a); d != "" {
			t.Errorf("after %s, the index names differ (-client-go +cachelab):\n%s", step, d)
		}
	}
	_, _ = cl.Add(ax1), cg.Add(ax1)
	_ = cl.AddIndexers(store.Indexers{"ns": store.MetaNamespaceIndexFunc})
	_ = cg.AddIndexers(cache.Indexers{"ns": cache.MetaNamespaceIndexFunc})
	compare("AddIndexers")
	cl.GetIndexers()["mine"], cg.GetIndexers()["mine"] = IndexByApp, IndexByApp
	compare("writing into GetIndexers' map")

	failing := func(any) ([]string, error) { return nil, errors.New("cannot index") }
	pa := CatchPanic(func() { _ = cl.AddIndexers(store.Indexers{"failing": failing}) })
	pb := CatchPanic(func() { _ = cg.AddIndexers(cache.Indexers{"failing": failing}) })
	if pa != pb || pb == "" {
		t.Errorf("AddIndexers with a failing IndexFunc: cachelab panicked with %q, client-go with %q", pa, pb)
	}
	compare("AddIndexers that panicked")
}

func names[M ~map[string]V, V any](m M) []string {
	var out []string
	for n := range m {
		out = append(out, n)
	}
	return Sorted(out)
}

// client-go: object-names.go, store.go ObjectToName, MetaObjectToName,
// controller.go DeletionHandlingObjectToName (S1): structured names and
// their errors.
func TestObjectNames(t *testing.T) {
	for _, c := range []struct {
		name   string
		cl, cg any
	}{
		{"namespaced", ax1, ax1}, {"cluster-scoped", c5, c5}, {"no meta", "a string", "a string"},
		{"tombstone", store.DeletedFinalStateUnknown{Key: "a/x"}, cache.DeletedFinalStateUnknown{Key: "a/x"}},
		{"tombstone with a bad key", store.DeletedFinalStateUnknown{Key: "a/b/c"}, cache.DeletedFinalStateUnknown{Key: "a/b/c"}},
	} {
		a, errA := store.DeletionHandlingObjectToName(c.cl)
		b, errB := cache.DeletionHandlingObjectToName(c.cg)
		if d := cmp.Diff([]string{b.String(), b.Namespace, b.Name, NormErr(errB)}, []string{a.String(), a.Namespace, a.Name, NormErr(errA)}); d != "" {
			t.Errorf("%s (-client-go +cachelab):\n%s", c.name, d)
		}
	}
	for _, key := range []string{"a/x", "c", "a/b/c", ""} {
		a, errA := store.ParseObjectName(key)
		b, errB := cache.ParseObjectName(key)
		if d := cmp.Diff([]string{b.String(), NormErr(errB)}, []string{a.String(), NormErr(errA)}); d != "" {
			t.Errorf("ParseObjectName(%q) (-client-go +cachelab):\n%s", key, d)
		}
		if a.AsNamespacedName() != b.AsNamespacedName() {
			t.Errorf("AsNamespacedName(%q): cachelab %v, client-go %v", key, a.AsNamespacedName(), b.AsNamespacedName())
		}
	}
}

// client-go: thread_safe_store.go Update (S4): an object without metadata
// (here a string, under a key function that keys anything) is stored but
// leaves the remembered resourceVersion as it was, by Add and by Update.
func TestObjectWithoutMetadataKeepsTheRV(t *testing.T) {
	keyAnything := func(obj any) (string, error) {
		if s, ok := obj.(string); ok {
			return "s/" + s, nil
		}
		return cache.MetaNamespaceKeyFunc(obj)
	}
	type rvStore interface {
		Add(any) error
		Update(any) error
		LastStoreSyncResourceVersion() string
	}
	steps := func(s rvStore) []string {
		_ = s.Add(ax1)
		out := []string{"add a/x@1: " + s.LastStoreSyncResourceVersion()}
		_ = s.Add("plain")
		out = append(out, "add a string: "+s.LastStoreSyncResourceVersion())
		_ = s.Update("plain")
		return append(out, "update the string: "+s.LastStoreSyncResourceVersion())
	}
	a := steps(store.New(store.Options{KeyFunc: keyAnything}))
	b := steps(cache.NewStore(keyAnything))
	if d := cmp.Diff(b, a); d != "" || b[2] != "update the string: 1" {
		t.Errorf("remembered RV (-client-go +cachelab):\n%s\nclient-go: %q", d, b)
	}
}
