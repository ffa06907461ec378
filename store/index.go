package store

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
)

// IndexFunc computes the values under which an object is indexed. One
// object may have many values (every label value, say) or none.
type IndexFunc func(obj any) ([]string, error)

// Indexers names the index functions of a store: index name → function.
type Indexers map[string]IndexFunc

// NamespaceIndex is the conventional name of the index built by
// MetaNamespaceIndexFunc.
const NamespaceIndex = "namespace"

// MetaNamespaceIndexFunc indexes an object by its namespace.
func MetaNamespaceIndexFunc(obj any) ([]string, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return []string{""}, fmt.Errorf("object has no meta: %v", err)
	}
	return []string{m.GetNamespace()}, nil
}

// keySet is a set of store keys.
type keySet map[string]struct{}

// index maps one index's values to the keys of the objects that have them.
type index map[string]keySet

// indices holds every index of a store. It is not locked: the
// ThreadSafeStore that owns it is.
//
// Invariant: for every index name n, stored key k and value v,
// k ∈ byName[n][v] exactly when funcs[n](items[k]) contains v; and no value
// maps to an empty set. An IndexFunc that fails (or panics) breaks it, as
// in client-go: the store then holds an object its indices do not.
type indices struct {
	funcs  Indexers
	byName map[string]index
}

// newIndices keeps the caller's map, as client-go does: AddIndexers
// writes into it, and GetIndexers returns it. A nil map gets a fresh one
// (client-go's NewStore; its NewIndexer keeps nil, where AddIndexers then
// panics).
func newIndices(funcs Indexers) indices {
	if funcs == nil {
		funcs = Indexers{}
	}
	return indices{funcs: funcs, byName: map[string]index{}}
}

// indexChange is what one object write does to one index.
type indexChange struct {
	name     string
	old, new []string
}

// plan computes, for every index, the values an object leaves and enters
// when key changes from oldObj to newObj (either may be nil). It changes
// nothing; a failing IndexFunc panics, with client-go's message.
//
// client-go (thread_safe_store.go updateSingleIndex) updates the indices
// one by one, in map order, so a panic leaves those before the failing one
// updated; cachelab leaves none updated, one of the outcomes client-go
// leaves to chance. The items are written as client-go writes them: an
// added or updated object is stored before it is indexed (putLocked), a
// deleted one removed after (deleteLocked).
func (ix *indices) plan(key string, oldObj, newObj any, buf []indexChange) []indexChange {
	for name, f := range ix.funcs {
		c := indexChange{name: name, old: mustIndex(f, name, key, oldObj), new: mustIndex(f, name, key, newObj)}
		if len(c.old) == 1 && len(c.new) == 1 && c.old[0] == c.new[0] {
			continue // the common case: the indexed value did not change
		}
		buf = append(buf, c)
	}
	return buf
}

// mustIndex runs an index function, panicking if it fails, as client-go
// does: a store cannot hold an object it cannot index.
func mustIndex(f IndexFunc, name, key string, obj any) []string {
	if obj == nil {
		return nil
	}
	values, err := f(obj)
	if err != nil {
		panic(fmt.Errorf("unable to calculate an index entry for key %q on index %q: %v", key, name, err))
	}
	return values
}

// apply carries out a plan on byName (the live indices, or new ones being
// built).
func apply(byName map[string]index, key string, changes []indexChange) {
	for _, c := range changes {
		idx := byName[c.name]
		if idx == nil {
			idx = index{}
			byName[c.name] = idx
		}
		for _, v := range c.old {
			idx.remove(v, key)
		}
		for _, v := range c.new {
			idx.add(v, key)
		}
	}
}

func (idx index) add(value, key string) {
	set := idx[value]
	if set == nil {
		set = keySet{}
		idx[value] = set
	}
	set[key] = struct{}{}
}

func (idx index) remove(value, key string) {
	set := idx[value]
	if set == nil {
		return
	}
	delete(set, key)
	if len(set) == 0 {
		delete(idx, value)
	}
}

// keysFor returns the keys indexed under value, or an error naming an
// index that does not exist. The set is the store's own: do not modify it.
func (ix *indices) keysFor(name, value string) (keySet, error) {
	if ix.funcs[name] == nil {
		return nil, fmt.Errorf("Index with name %s does not exist", name)
	}
	return ix.byName[name][value], nil
}

// keysMatching returns the keys of objects that share any index value with
// obj. With one value it returns the store's own set: do not modify it.
func (ix *indices) keysMatching(name string, obj any) (keySet, error) {
	f := ix.funcs[name]
	if f == nil {
		return nil, fmt.Errorf("Index with name %s does not exist", name)
	}
	values, err := f(obj)
	if err != nil {
		return nil, err
	}
	idx := ix.byName[name]
	if len(values) == 1 {
		return idx[values[0]], nil
	}
	union := keySet{}
	for _, v := range values {
		for k := range idx[v] {
			union[k] = struct{}{}
		}
	}
	return union, nil
}

// values lists the values an index holds, in map order.
func (ix *indices) values(name string) []string {
	idx := ix.byName[name]
	out := make([]string, 0, len(idx))
	for v := range idx {
		out = append(out, v)
	}
	return out
}

// checkNoClash refuses index names already taken. The error text is
// client-go's, which prints the clashing names as a set.
func (ix *indices) checkNoClash(more Indexers) error {
	clash := keySet{}
	for name := range more {
		if _, taken := ix.funcs[name]; taken {
			clash[name] = struct{}{}
		}
	}
	if len(clash) > 0 {
		return fmt.Errorf("indexer conflict: %v", map[string]struct{}(clash))
	}
	return nil
}

// rebuild recomputes every index from items, as Replace needs, from
// scratch. An IndexFunc that panics leaves
// the indices holding the items indexed until then, as client-go's reset
// and re-index do.
func (ix *indices) rebuild(items map[string]any) {
	ix.byName = map[string]index{}
	var buf [4]indexChange
	for key, obj := range items {
		apply(ix.byName, key, ix.plan(key, nil, obj, buf[:0]))
	}
}

// addFuncsAndIndex registers new index functions and indexes the existing
// items with them. A name clash returns an error before anything changes;
// as in client-go, the functions are registered first, so a failing
// IndexFunc panics with them registered and the items indexed up to it.
func (ix *indices) addFuncsAndIndex(more Indexers, items map[string]any) error {
	if err := ix.checkNoClash(more); err != nil {
		return err
	}
	for name, f := range more {
		ix.funcs[name] = f
	}
	added := indices{funcs: more}
	var buf [4]indexChange
	for key, obj := range items {
		apply(ix.byName, key, added.plan(key, nil, obj, buf[:0]))
	}
	return nil
}
