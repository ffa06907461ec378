// Package skeleton is process.go as a learner gets it, its comments aside:
// TestSkeletonFails runs the lab on it, so that CI proves the skeleton
// fails whatever the learner's process.go holds, and notebooks/internal/lab
// checks that it is still process.go's code.
package skeleton

import "github.com/cachelab/cachelab/notebooks/05-informer/exercise/model"

// Delta is the model's.
type Delta = model.Delta

// Call is the model's.
type Call = model.Call

// Process is process.go's, unwritten: no handler is called.
func Process(cache map[string]string, d Delta, isInInitialList bool) []Call {
	return nil
}
