// Package solution is the reference solution of chapter 2's lab.
package solution

import "github.com/cachelab/cachelab/notebooks/02-queues/exercise/model"

// Pops is the exercise's model of a DeltaFIFO, done.
func Pops(ops []model.Op) [][]model.Delta {
	var order []string                  // keys, in the order they were first queued
	items := map[string][]model.Delta{} // each queued key's deltas
	pop := func() []model.Delta {
		key := order[0]
		order = order[1:]
		d := items[key]
		delete(items, key)
		return d
	}
	var out [][]model.Delta
	for _, op := range ops {
		if op.Kind == "pop" {
			if len(order) > 0 {
				out = append(out, pop())
			}
			continue
		}
		typ := map[string]string{"add": "Added", "update": "Updated", "delete": "Deleted"}[op.Kind]
		queued := items[op.Key]
		if typ == "Deleted" && len(queued) == 0 {
			continue // D3: not queued, not known
		}
		d := model.Delta{Type: typ, Key: op.Key, RV: op.RV}
		if n := len(queued); n > 0 && typ == "Deleted" && queued[n-1].Type == "Deleted" {
			continue // D2: keep the older of two deletes
		}
		if len(queued) == 0 {
			order = append(order, op.Key)
		}
		items[op.Key] = append(queued, d)
	}
	for len(order) > 0 {
		out = append(out, pop())
	}
	return out
}
