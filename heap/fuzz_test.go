package heap_test

import (
	"testing"

	. "github.com/cachelab/cachelab/internal/difftest"
)

// FuzzHeap runs random heap scripts (adds, updates, AddIfNotPresent,
// BulkAdd, deletes, pops, reads, Close; few keys and few priorities, so
// that keys meet again and priorities tie; now and then an object that
// cannot be keyed) against cachelab's and client-go's Heap, with one of
// three orders, comparing every result, every Pop included, and the whole
// state after every step (B1–B7).
func FuzzHeap(f *testing.F) {
	for _, s := range [][]byte{
		{},
		{0, 0, 1, 0, 2, 0, 3, 0, 4, 9, 10, 11, 9, 9},
		{1, 7, 3, 0, 1, 2, 3, 4, 5, 9, 15, 0, 9, 9, 9},
		{2, 5, 0, 5, 0, 8, 1, 6, 2, 9, 13, 3, 12, 4, 14},
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d := NewDecoder(data)
		less := lessNames[d.Intn(len(lessNames))]
		runHeapScript(t, less, fuzzOps(d, 200))
	})
}

var fuzzNames = []string{"a", "b", "c", "d", "e", "f"}

// fuzzObj reads a job with a priority in -1..2, or, one time in sixteen,
// an object the key function refuses.
func fuzzObj(d *Decoder) any {
	if d.Intn(16) == 15 {
		return Bad(d.Intn(4))
	}
	return j(fuzzNames[d.Intn(len(fuzzNames))], d.Intn(4)-1)
}

// fuzzOps reads a script of at most max steps.
func fuzzOps(d *Decoder, max int) []hop {
	var ops []hop
	for len(ops) < max && !d.Done() {
		ops = append(ops, fuzzOp(d))
	}
	return ops
}

func fuzzOp(d *Decoder) hop {
	switch d.Intn(16) {
	case 0, 1, 2, 3:
		return add(fuzzObj(d))
	case 4:
		return update(fuzzObj(d))
	case 5, 6:
		return addIfNotPresent(fuzzObj(d))
	case 7:
		objs := make([]any, d.Intn(4))
		for i := range objs {
			objs[i] = fuzzObj(d)
		}
		return bulkAdd(objs...)
	case 8:
		return del(fuzzObj(d))
	case 9, 10, 11:
		return pop()
	case 12:
		return get(fuzzObj(d))
	case 13:
		return getByKey(fuzzNames[d.Intn(len(fuzzNames))])
	case 14:
		if d.Intn(2) == 0 {
			return list()
		}
		return listKeys()
	}
	if d.Intn(8) == 0 {
		return closeHeap()
	}
	return pop()
}
