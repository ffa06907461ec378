//go:build !linux

package foreign

import "testing"

// inNetwork skips t: a network namespace is Linux's.
func inNetwork(t *testing.T, env ...string) bool {
	t.Skip("the controller needs a network namespace of its own, which only Linux has")
	return false
}

// ownNetwork says no: the namespace the test makes is Linux's.
func ownNetwork() bool { return false }
