// Package skeleton is predict.go as a learner gets it, its comments aside:
// TestSkeletonFails runs the lab on it, so that CI proves the skeleton
// fails whatever the learner's predict.go holds, and notebooks/internal/lab
// checks that it is still predict.go's code.
package skeleton

// LosesDelete is predict.go's, unwritten: no placement loses the delete.
func LosesDelete(disconnectBefore, reconnectBefore int) bool {
	return false
}
