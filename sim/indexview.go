package sim

import (
	"maps"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cachelab/cachelab/sim/trace"
)

// indexView is a side's indexer as the trace shows it (key ->
// "ns/name@rv"), kept from one read to the next so that a read costs what
// changed in the indexer rather than what it holds (issue 28). A store
// hands out the objects it holds, so an object still held is the same
// pointer; the view describes it once, and on every later read only looks
// it up and checks its resourceVersion (an object changed in place is
// described again). The maps it hands out are never changed afterwards:
// a read that finds changes makes a new one.
type indexView struct {
	byObj map[*unstructured.Unstructured]*viewEntry
	index map[string]string
	pass  uint64 // counts reads; an entry's pass says the last read that found it

	// What changed since the last takeChanges, for the trace's indexer
	// lines: the keys, or everything (all) after a rebuild or a reset.
	changed map[string]bool
	all     bool
}

type viewEntry struct {
	key, desc, rv string
	pass          uint64
}

func newIndexView() *indexView { return &indexView{all: true} }

// read is the indexer's content, given everything it lists. With check,
// it also reads the resourceVersion of every object it has described
// before, and describes again one changed in place (which no store
// should do, and which the step's own read must not miss); without, it
// trusts that a pointer it knows is the object it described, as settling
// may while it polls.
func (v *indexView) read(objs []any, check bool) map[string]string {
	v.pass++
	var fresh []*unstructured.Unstructured // not held at the last read, or changed in place since
	found := 0
	for _, o := range objs {
		u, ok := o.(*unstructured.Unstructured)
		if !ok || u == nil {
			return v.rebuild(objs) // not what a store of unstructured objects holds: describe it all
		}
		if e := v.byObj[u]; e != nil && (!check || e.rv == trace.UnstructuredRV(u)) {
			e.pass = v.pass
			found++
			continue
		}
		fresh = append(fresh, u)
	}
	gone := len(v.byObj) - found
	switch {
	case v.index != nil && gone == 0 && len(fresh) == 0:
		return v.index
	case v.index == nil || gone+len(fresh) > len(objs)/4+16:
		return v.rebuild(objs)
	}
	next := maps.Clone(v.index)
	for u, e := range v.byObj { // what left goes first: a replacement may take its key
		if e.pass != v.pass {
			delete(next, e.key)
			delete(v.byObj, u)
			v.mark(e.key)
		}
	}
	for _, u := range fresh {
		e := v.describe(u)
		next[e.key] = e.desc
		v.mark(e.key)
	}
	v.index = next
	return next
}

// rebuild describes every object again.
func (v *indexView) rebuild(objs []any) map[string]string {
	v.byObj = make(map[*unstructured.Unstructured]*viewEntry, len(objs))
	v.index = make(map[string]string, len(objs))
	v.all, v.changed = true, nil
	for _, o := range objs {
		if u, ok := o.(*unstructured.Unstructured); ok && u != nil {
			e := v.describe(u)
			v.index[e.key] = e.desc
			continue
		}
		k, d := trace.KeyAndDescribe(o)
		v.index[k] = d
	}
	return v.index
}

func (v *indexView) describe(u *unstructured.Unstructured) *viewEntry {
	k, d := trace.KeyAndDescribe(u)
	e := &viewEntry{key: k, desc: d, rv: trace.UnstructuredRV(u), pass: v.pass}
	v.byObj[u] = e
	return e
}

func (v *indexView) mark(key string) {
	if v.all {
		return
	}
	if v.changed == nil {
		v.changed = map[string]bool{}
	}
	v.changed[key] = true
}

// reset forgets the view: the indexer is gone (no informer), or what it
// is compared with was (a fresh start).
func (v *indexView) reset() {
	v.byObj, v.index, v.changed, v.all = nil, nil, nil, true
}

// takeChanges is the keys whose description changed since it was last
// called (all: any may have), and starts counting again.
func (v *indexView) takeChanges() (keys map[string]bool, all bool) {
	keys, all = v.changed, v.all
	v.changed, v.all = nil, false
	return keys, all
}
