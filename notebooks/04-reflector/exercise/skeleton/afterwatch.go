// Package skeleton is afterwatch.go as a learner gets it, its comments aside:
// TestSkeletonFails runs the lab on it, so that CI proves the skeleton
// fails whatever the learner's afterwatch.go holds, and notebooks/internal/lab
// checks that it is still afterwatch.go's code.
package skeleton

import "time"

// WatchEnd is afterwatch.go's: how a watch ended.
type WatchEnd struct {
	Status        int
	FromWatchCall bool
	Events        int
	Lasted        time.Duration
	LastSyncedRV  string
}

// Action is afterwatch.go's: what a reflector does after a watch ends.
type Action int

// The actions.
const (
	Rewatch Action = iota + 1
	Relist
)

// Next is afterwatch.go's: the reflector's next request.
type Next struct {
	Action          Action
	Backoff         bool
	ResourceVersion string
}

// AfterWatch is afterwatch.go's, unwritten: it decides nothing.
func AfterWatch(end WatchEnd) Next {
	return Next{}
}
