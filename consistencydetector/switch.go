package consistencydetector

import (
	"os"
	"strconv"
	"sync/atomic"
)

// EnvWatchList is the environment variable that switches the watch-list
// check on for the whole process, read once as it starts (V1).
const EnvWatchList = "KUBE_WATCHLIST_INCONSISTENCY_DETECTOR"

// watchListEnabled is the process's switch. An atomic, where client-go
// has a plain bool: a test that flips it must not race a reflector of an
// earlier test still ending.
var watchListEnabled atomic.Bool

func init() {
	// A value that is not a boolean leaves the check off, as client-go
	// ignores strconv.ParseBool's error.
	on, _ := strconv.ParseBool(os.Getenv(EnvWatchList))
	watchListEnabled.Store(on)
}

// IsDataConsistencyDetectionForWatchListEnabled reports whether the
// watch-list check is on: KUBE_WATCHLIST_INCONSISTENCY_DETECTOR was true
// when the process started, or a test switched it on since.
func IsDataConsistencyDetectionForWatchListEnabled() bool {
	return watchListEnabled.Load()
}

// SetDataConsistencyDetectionForWatchListEnabledForTest switches the
// watch-list check on or off for the whole process, and returns the
// function that puts back the value it replaced.
func SetDataConsistencyDetectionForWatchListEnabledForTest(enabled bool) func() {
	was := watchListEnabled.Swap(enabled)
	return func() { watchListEnabled.Store(was) }
}
