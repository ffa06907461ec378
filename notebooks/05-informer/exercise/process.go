// Package exercise is chapter 5's lab: write what an informer does with a
// popped delta, then check it against client-go's informer:
//
//	go test -tags lab -v ./notebooks/05-informer/exercise
//
// The reference solution is in solution/; try without it first.
package exercise

import "github.com/cachelab/cachelab/notebooks/05-informer/exercise/model"

// Delta is a popped delta; see the model package.
type Delta = model.Delta

// Call is a handler call; see the model package.
type Call = model.Call

// Process applies one popped delta to the cache (key -> resourceVersion)
// and returns the handler calls it makes, as client-go's informer does
// (processDeltas, behaviours P1, P2, P11):
//
//   - Added, Updated (and Replaced, Sync): if the key is cached, the cache
//     is updated and the handler hears OnUpdate(old, new); if not, it is
//     added and the handler hears OnAdd(new, isInInitialList);
//   - Deleted: the key leaves the cache and the handler hears OnDelete,
//     whether or not the key was cached.
func Process(cache map[string]string, d Delta, isInInitialList bool) []Call {
	// TODO: update cache and return the calls.
	return nil
}
