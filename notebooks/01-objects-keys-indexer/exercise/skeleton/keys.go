// Package skeleton is keys.go as a learner gets it, its comments aside:
// TestSkeletonFails runs the lab on it, so that CI proves the skeleton
// fails whatever the learner's keys.go holds, and notebooks/internal/lab
// checks that it is still keys.go's code.
package skeleton

import "errors"

// KeyFunc is keys.go's, unwritten: it returns an error.
func KeyFunc(obj any) (string, error) {
	return "", errors.New("KeyFunc is not written yet")
}

// AppIndex is keys.go's, unwritten: it returns an error.
func AppIndex(obj any) ([]string, error) {
	return nil, errors.New("AppIndex is not written yet")
}
