// Package skeleton is deltafifo.go as a learner gets it, its comments aside:
// TestSkeletonFails runs the lab on it, so that CI proves the skeleton
// fails whatever the learner's deltafifo.go holds, and notebooks/internal/lab
// checks that it is still deltafifo.go's code.
package skeleton

import "github.com/cachelab/cachelab/notebooks/02-queues/exercise/model"

// Op is the model's.
type Op = model.Op

// Delta is the model's.
type Delta = model.Delta

// Pops is deltafifo.go's, unwritten: nothing pops.
func Pops(ops []Op) [][]Delta {
	return nil
}
