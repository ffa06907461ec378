// Package skeleton is predict.go as a learner gets it, its comments aside:
// TestSkeletonFails runs the lab on it, so that CI proves the skeleton
// fails whatever the learner's predict.go holds, and notebooks/internal/lab
// checks that it is still predict.go's code.
package skeleton

import "github.com/cachelab/cachelab/notebooks/07-watch-cache/exercise/model"

// Step is the model's.
type Step = model.Step

// Answer is the model's.
type Answer = model.Answer

// Predict is predict.go's, unwritten: it answers no LIST.
func Predict(steps []Step) []Answer {
	return nil
}
