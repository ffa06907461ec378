package store

import (
	"slices"
	"strings"
)

// entry is one stored object with its key.
type entry struct {
	key string
	obj any
}

func byKey(e entry, key string) int { return strings.Compare(e.key, key) }

// keyOrder keeps the store's objects in key order, for List and ListKeys.
// The map is the truth; keyOrder trails it. A write only notes the key it
// touched (one append, so writes cost what client-go's do); the next list
// catches up on the noted keys and then copies contiguous memory, which
// is cheaper than ranging over a map, let alone looking every key up in
// one:
//
//	write k ──► touched = [..., k]
//	list    ──► catchUp: sort touched, then for each key:
//	              in map, in entries     → entries[i].obj = new object
//	              in map, not in entries → insert (one merge from the back)
//	              gone,   in entries     → remove (one compaction)
//	            copy entries[i].obj (or .key) out
//
// Invariant, after catchUp: entries holds exactly the map's keys, sorted
// and without repeats, each with the map's object. Between a write and
// the next catchUp, entries may still hold objects the store has since
// replaced or deleted; touched bounds how many (see touch).
//
// keyOrder is not locked: its ThreadSafeStore writes it holding mu, and
// catches it up holding mu for reading and orderMu, since lists run side
// by side.
type keyOrder struct {
	entries []entry
	touched []string // keys written since the last catchUp, with repeats
	// stale means entries must be rebuilt from the map: after a Replace,
	// or when touched outgrew the store. touched is then not kept.
	stale bool
}

// touch notes a write of key to a store now holding n objects. When more
// keys are noted than a quarter of the store, catching up would cost about
// what rebuilding costs, and entries would be holding many objects the
// store has let go of: drop everything, rebuild at the next list.
func (o *keyOrder) touch(key string, n int) {
	if o.stale {
		return
	}
	o.touched = append(o.touched, key)
	if len(o.touched) > n/4+64 {
		o.drop()
	}
}

// drop forgets entries (and the objects they hold) until the next list.
func (o *keyOrder) drop() {
	clear(o.entries)
	o.entries = o.entries[:0]
	o.touched = nil
	o.stale = true
}

// catchUp brings entries in line with items: O(n log n) if stale, else
// O(k log k + k log n) to sort and find k touched keys, plus the moves of
// at most one merge and one compaction.
func (o *keyOrder) catchUp(items map[string]any) {
	switch {
	case o.stale:
		o.rebuild(items)
	case len(o.touched) > 0:
		o.merge(items)
	}
}

func (o *keyOrder) rebuild(items map[string]any) {
	o.entries = slices.Grow(o.entries[:0], len(items))
	for k, obj := range items {
		o.entries = append(o.entries, entry{k, obj})
	}
	slices.SortFunc(o.entries, func(a, b entry) int { return strings.Compare(a.key, b.key) })
	o.stale = false
}

// merge applies the touched keys: updates in place, then removals, then
// insertions.
func (o *keyOrder) merge(items map[string]any) {
	slices.Sort(o.touched)
	var gone []int
	var added []entry
	for _, k := range slices.Compact(o.touched) {
		obj, stored := items[k]
		i, found := slices.BinarySearchFunc(o.entries, k, byKey)
		switch {
		case stored && found:
			o.entries[i].obj = obj
		case stored:
			added = append(added, entry{k, obj})
		case found:
			gone = append(gone, i)
		}
	}
	clear(o.touched)
	o.touched = o.touched[:0]
	o.entries = removeAt(o.entries, gone)
	o.entries = insertSorted(o.entries, added)
}

// removeAt removes the entries at positions gone (ascending), moving each
// run between them down once.
func removeAt(e []entry, gone []int) []entry {
	if len(gone) == 0 {
		return e
	}
	w := gone[0]
	for j, p := range gone {
		end := len(e)
		if j+1 < len(gone) {
			end = gone[j+1]
		}
		w += copy(e[w:], e[p+1:end])
	}
	clear(e[w:]) // let the removed objects go
	return e[:w]
}

// insertSorted merges added (sorted, no key already in e) into e, from the
// back: the j+1 entries added[0..j] all come before the old entries that
// come after added[j], so each run of old entries moves up once, by j+1.
func insertSorted(e, added []entry) []entry {
	if len(added) == 0 {
		return e
	}
	hi := len(e) // e[:hi] has not moved yet
	e = slices.Grow(e, len(added))[:len(e)+len(added)]
	for j := len(added) - 1; j >= 0; j-- {
		p, _ := slices.BinarySearchFunc(e[:hi], added[j].key, byKey)
		copy(e[p+j+1:], e[p:hi])
		e[p+j] = added[j]
		hi = p
	}
	return e
}
