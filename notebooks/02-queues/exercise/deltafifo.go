// Package exercise is chapter 2's lab: predict what a DeltaFIFO pops. Given
// a story of queue operations, return what each Pop returns, as client-go's
// DeltaFIFO would; then check it:
//
//	go test -tags lab -v ./notebooks/02-queues/exercise
//
// The reference solution is in solution/; try without it first.
package exercise

import "github.com/cachelab/cachelab/notebooks/02-queues/exercise/model"

// Op is one queue operation: "add", "update" or "delete" of an object
// (Key at resourceVersion RV), or "pop", which pops one item.
type Op = model.Op

// Delta is one entry of a popped item: "Added", "Updated" or "Deleted",
// and the object's key and resourceVersion.
type Delta = model.Delta

// Pops runs ops against a model of a DeltaFIFO without known objects
// (DeltaFIFOOptions{}), and returns what every "pop" popped, in order,
// followed by what popping the queue until it is empty gives. Each popped
// item is the deltas of one key. The rules to reproduce:
//
//   - D1: keys come out in the order they were first queued; a delta for a
//     key already queued joins that key's deltas and does not move it;
//   - D2: two deletes in a row for a key keep only the older one;
//   - D3: deleting a key that is not queued (and, here, not known) does
//     nothing.
//
// A "pop" on an empty queue pops nothing (leave it out).
func Pops(ops []Op) [][]Delta {
	// TODO: model the queue: the order of keys, and each key's deltas.
	return nil
}
