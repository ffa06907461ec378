package difftest

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/internal/meter"
	"github.com/cachelab/cachelab/metrics"
	"github.com/cachelab/cachelab/store"
)

// StoreOp is one step of a store script.
type StoreOp struct {
	// Kind is one of: add update delete get getbykey list listkeys rv
	// replace index indexkeys byindex listvalues addindexers bookmark
	// transaction resync.
	Kind  string
	Obj   any
	List  []any
	Key   string // getbykey
	Index string // index queries, addindexers
	Value string // indexkeys, byindex
	RV    string // replace, bookmark
	Txns  []Txn  // transaction
}

// Txn is one transaction entry: Type is "Add", "Update" or "Delete".
type Txn struct {
	Type string
	Obj  any
}

func (o StoreOp) String() string {
	switch o.Kind {
	case "getbykey":
		return "getbykey " + o.Key
	case "replace":
		return fmt.Sprintf("replace [%s] rv=%q", describeAll(o.List), o.RV)
	case "index":
		return fmt.Sprintf("index %s %s", o.Index, describe(o.Obj))
	case "indexkeys", "byindex":
		return fmt.Sprintf("%s %s=%s", o.Kind, o.Index, o.Value)
	case "listvalues", "addindexers":
		return o.Kind + " " + o.Index
	case "bookmark":
		return fmt.Sprintf("bookmark rv=%q", o.RV)
	case "transaction":
		parts := make([]string, len(o.Txns))
		for i, t := range o.Txns {
			parts[i] = t.Type + " " + describe(t.Obj)
		}
		return "transaction [" + strings.Join(parts, ", ") + "]"
	case "resync", "list", "listkeys", "rv":
		return o.Kind
	}
	return o.Kind + " " + describe(o.Obj)
}

// StoreIndexers are the index functions a store script can use by name.
// "app" and "namespace" exist from the start; "labels" is added by an
// addindexers op; "missing" never exists.
var StoreIndexers = map[string]func(any) ([]string, error){
	"app":       IndexByApp,
	"namespace": cache.MetaNamespaceIndexFunc,
	"labels":    IndexByLabelValues,
}

// StoreConfig selects a store's options; the same config builds both sides.
type StoreConfig struct {
	Transform bool
	// DeletionHandling keys with DeletionHandlingMetaNamespaceKeyFunc.
	DeletionHandling bool
	// HideRV stands for client-go's AtomicFIFO gate off; the test must
	// turn the gate off too.
	HideRV bool
	// Metered gives each store a reserved name and a Meter (S6): what the
	// resourceVersion gauge hears is compared after every op and noted.
	Metered bool
}

type storeSide struct {
	ix       cache.Indexer
	txn      func(txns []Txn) error
	clientGo bool
	meter    *meter.Meter
}

// storeResult is what one op returned, normalized.
type storeResult struct {
	Items  []any // sorted by key where the order is map order
	Keys   []string
	Exists bool
	Err    string
	Panic  bool
}

// storeState is everything observable about a store between ops.
type storeState struct {
	Items   []any
	Keys    []string
	RV      string
	Indices map[string]map[string][]string // index → value → sorted keys
}

// RunStoreScript runs a store script against cachelab's Cache and
// client-go's Indexer, comparing every result and the whole observable
// state after every op; it returns cachelab's transcript.
func RunStoreScript(t *testing.T, cfg StoreConfig, ops []StoreOp) []string {
	t.Helper()
	cl, cg := newStores(cfg)
	if cfg.Metered {
		clID, cgID, release := meter.Reserve("meter")
		t.Cleanup(release)
		cl.meter, cg.meter = meter.New(), meter.New()
		cl.ix = clIndexer{store.New(storeOptions(cfg, clID, cl.meter.Provider()))}
		cg.ix = cache.NewIndexer(cgKeyFunc(cfg), cgIndexers(), append(cgStoreOptions(cfg), cache.WithStoreMetrics(cgID, cg.meter.ClientGoProvider()))...)
		cl.txn, cg.txn = clTxn(cl.ix.(clIndexer).Cache), cgTxn(cg.ix)
	}
	var trace []string
	for i, op := range ops {
		a, b := runStoreOp(cl, op), runStoreOp(cg, op)
		line := op.String()
		if d := diffNormed(a, b); d != "" {
			t.Fatalf("divergence from client-go at step %d (%s): result (-client-go +cachelab):\n%s", i+1, line, d)
		}
		trace = append(trace, line+" → "+describeStoreResult(op, a))
		if cl.meter != nil {
			ma, mb := cl.meter.Take(), cg.meter.Take()
			if d := diffNormed(ma, mb); d != "" {
				t.Fatalf("divergence from client-go at step %d (%s): metrics (-client-go +cachelab):\n%s", i+1, line, d)
			}
			for _, m := range ma {
				if !strings.HasPrefix(m, "new ") {
					trace = append(trace, line+" → metric "+m)
				}
			}
		}
		checkKeyOrder(t, cl.ix, i+1, line)
		sa, sb := stateOf(cl), stateOf(cg)
		if a.Panic {
			// An IndexFunc panicked. client-go leaves the items and the
			// resourceVersion as far as it got, which cachelab matches,
			// and the indices updated one by one in map order up to the
			// panic, which is left to chance: they are not compared.
			sa.Indices, sb.Indices = nil, nil
			if d := diffNormed(sa, sb); d != "" {
				t.Fatalf("divergence from client-go after step %d (%s), which panicked: state (-client-go +cachelab):\n%s", i+1, line, d)
			}
			return trace
		}
		if d := diffNormed(sa, sb); d != "" {
			t.Fatalf("divergence from client-go after step %d (%s): state (-client-go +cachelab):\n%s", i+1, line, d)
		}
	}
	return trace
}

// checkKeyOrder fails unless cachelab's List and ListKeys come in key
// order, List()[i] being the object stored under ListKeys()[i]: the order
// cachelab promises where client-go's is map order (the state compared
// with client-go is sorted, so it cannot see this).
func checkKeyOrder(t *testing.T, ix cache.Indexer, step int, line string) {
	t.Helper()
	keys, objs := ix.ListKeys(), ix.List()
	if !slices.IsSorted(keys) || len(objs) != len(keys) {
		t.Fatalf("after step %d (%s): ListKeys = %q (%d objects listed), want the keys sorted, one per object", step, line, keys, len(objs))
	}
	for i, k := range keys {
		if obj, _, _ := ix.GetByKey(k); !reflect.DeepEqual(obj, objs[i]) {
			t.Fatalf("after step %d (%s): List()[%d] = %v, want the object stored under %q, %v", step, line, i, objs[i], k, obj)
		}
	}
}

func newStores(cfg StoreConfig) (cl, cg storeSide) {
	c := store.New(storeOptions(cfg, metrics.InformerNameAndResource{}, nil))
	g := cache.NewIndexer(cgKeyFunc(cfg), cgIndexers(), cgStoreOptions(cfg)...)
	return storeSide{ix: clIndexer{c}, txn: clTxn(c)}, storeSide{ix: g, clientGo: true, txn: cgTxn(g)}
}

// storeInitial are the indices a script's stores start with.
var storeInitial = []string{"app", "namespace"}

func storeOptions(cfg StoreConfig, id metrics.InformerNameAndResource, p metrics.Provider) store.Options {
	idx := store.Indexers{}
	for _, n := range storeInitial {
		idx[n] = StoreIndexers[n]
	}
	o := store.Options{Indexers: idx, HideResourceVersion: cfg.HideRV, Identifier: id, MetricsProvider: p}
	if cfg.DeletionHandling {
		o.KeyFunc = store.DeletionHandlingMetaNamespaceKeyFunc
	}
	if cfg.Transform {
		o.Transformer = Transform
	}
	return o
}

func cgIndexers() cache.Indexers {
	idx := cache.Indexers{}
	for _, n := range storeInitial {
		idx[n] = StoreIndexers[n]
	}
	return idx
}

func cgKeyFunc(cfg StoreConfig) cache.KeyFunc {
	if cfg.DeletionHandling {
		return cache.DeletionHandlingMetaNamespaceKeyFunc
	}
	return cache.MetaNamespaceKeyFunc
}

func cgStoreOptions(cfg StoreConfig) []cache.StoreOption {
	if cfg.Transform {
		return []cache.StoreOption{cache.WithTransformer(Transform)}
	}
	return nil
}

func clTxn(c *store.Cache) func([]Txn) error {
	return func(txns []Txn) error {
		entries := make([]store.Transaction, len(txns))
		for i, x := range txns {
			entries[i] = store.Transaction{Type: store.TransactionType(x.Type), Object: sideObj(x.Obj, false)}
		}
		return c.Transaction(entries...)
	}
}

func cgTxn(g cache.Indexer) func([]Txn) error {
	return func(txns []Txn) error {
		entries := make([]cache.Transaction, len(txns))
		for i, x := range txns {
			entries[i] = cache.Transaction{Type: cache.TransactionType(x.Type), Object: sideObj(x.Obj, true)}
		}
		// client-go returns a *TransactionError: a nil one must not
		// become a non-nil error.
		if err := g.(cache.TransactionStore).Transaction(entries...); err != nil {
			return err
		}
		return nil
	}
}

// clIndexer adapts store.Cache to client-go's Indexer shape: the only
// difference is the Indexers map type in GetIndexers and AddIndexers.
type clIndexer struct{ *store.Cache }

func (c clIndexer) GetIndexers() cache.Indexers {
	out := cache.Indexers{}
	for n, f := range c.Cache.GetIndexers() {
		out[n] = cache.IndexFunc(f)
	}
	return out
}

func (c clIndexer) AddIndexers(more cache.Indexers) error {
	in := store.Indexers{}
	for n, f := range more {
		in[n] = store.IndexFunc(f)
	}
	return c.Cache.AddIndexers(in)
}

func runStoreOp(s storeSide, op StoreOp) (r storeResult) {
	defer func() {
		if p := recover(); p != nil {
			r = storeResult{Panic: true}
		}
	}()
	var err error
	op.Obj, op.List = sideObj(op.Obj, s.clientGo), sideList(op.List, s.clientGo)
	switch op.Kind {
	case "add":
		err = s.ix.Add(op.Obj)
	case "update":
		err = s.ix.Update(op.Obj)
	case "delete":
		err = s.ix.Delete(op.Obj)
	case "get":
		var item any
		item, r.Exists, err = s.ix.Get(op.Obj)
		r.Items = []any{item}
	case "getbykey":
		var item any
		item, r.Exists, err = s.ix.GetByKey(op.Key)
		r.Items = []any{item}
	case "list":
		r.Items = SortedByKey(s.ix.List())
	case "listkeys":
		r.Keys = Sorted(s.ix.ListKeys())
	case "rv":
		r.Keys = []string{s.ix.LastStoreSyncResourceVersion()}
	case "replace":
		err = s.ix.Replace(append([]any(nil), op.List...), op.RV)
	case "index":
		r.Items, err = s.ix.Index(op.Index, op.Obj)
		r.Items = SortedByKey(r.Items)
	case "indexkeys":
		r.Keys, err = s.ix.IndexKeys(op.Index, op.Value) // sorted by both
	case "byindex":
		r.Items, err = s.ix.ByIndex(op.Index, op.Value)
		r.Items = SortedByKey(r.Items)
	case "listvalues":
		r.Keys = Sorted(s.ix.ListIndexFuncValues(op.Index))
	case "addindexers":
		err = s.ix.AddIndexers(cache.Indexers{op.Index: StoreIndexers[op.Index]})
	case "bookmark":
		s.ix.Bookmark(op.RV)
	case "transaction":
		err = s.txn(op.Txns)
	case "resync":
		err = s.ix.Resync()
	default:
		panic("difftest: unknown store op " + op.Kind)
	}
	r.Err = NormErr(err)
	return r
}

func stateOf(s storeSide) storeState {
	st := storeState{
		Items:   SortedByKey(s.ix.List()),
		Keys:    Sorted(s.ix.ListKeys()),
		RV:      s.ix.LastStoreSyncResourceVersion(),
		Indices: map[string]map[string][]string{},
	}
	names := make([]string, 0)
	for n := range s.ix.GetIndexers() {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		values := map[string][]string{}
		for _, v := range s.ix.ListIndexFuncValues(n) {
			keys, err := s.ix.IndexKeys(n, v)
			if err != nil {
				keys = []string{"error: " + err.Error()}
			}
			values[v] = keys
		}
		st.Indices[n] = values
	}
	return st
}

func describeStoreResult(op StoreOp, r storeResult) string {
	switch {
	case r.Panic:
		return "panic"
	case r.Err != "":
		return "error: " + r.Err
	}
	switch op.Kind {
	case "get", "getbykey":
		if !r.Exists {
			return "not found"
		}
		return describe(Norm(r.Items[0]))
	case "index", "byindex", "list":
		return "[" + describeAll(r.Items) + "]"
	case "rv":
		return fmt.Sprintf("%q", r.Keys[0])
	case "indexkeys", "listvalues", "listkeys":
		return "[" + strings.Join(r.Keys, " ") + "]"
	}
	return "ok"
}

// TAdd, TUpdate and TDelete build transaction entries.
func TAdd(obj any) Txn { return Txn{Type: "Add", Obj: obj} }

// TUpdate builds an Update transaction entry.
func TUpdate(obj any) Txn { return Txn{Type: "Update", Obj: obj} }

// TDelete builds a Delete transaction entry.
func TDelete(obj any) Txn { return Txn{Type: "Delete", Obj: obj} }
