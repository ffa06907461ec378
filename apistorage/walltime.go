package apistorage

import (
	"fmt"
	"sync"

	"k8s.io/apiserver/pkg/features"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
)

// The wall clock in kube-apiserver's storage. The cacher's timers run on
// the Server's clock (Options.Clock), but a few of k8s.io/apiserver's
// loops wait on the wall clock whatever clock they are given. In a
// simulation only the scenario's clock is time: a loop that wakes after
// minutes of wall time would make what a run shows depend on how long a
// person read the screen at a --step prompt. Each is accounted for:
//
//   - The cache consistency checker (DetectCacheInconsistency, beta and
//     on by default since 1.34) compares the cache with etcd every 5 to
//     7.5 minutes of wall time (cacher/consistency, CheckPeriod); a check
//     that fails turns the cache's snapshots off, so the exact and paged
//     LISTs it served from them go to etcd (C8). It is
//     switched off here (disableWallClockChecks), as in a kube-apiserver
//     started with --feature-gates=DetectCacheInconsistency=false: left
//     on, a pause of five minutes put its goroutine in one of
//     apimachinery's wall-clock wait loops for good, which Quiescent
//     counts as work to come, and the next step could not settle.
//   - The cacher's dispatcher polls every 10 ms for the cache's first
//     LIST (New and WaitReady wait until it is past that poll), and the
//     cacher restarts a failed cache every second: Quiescent counts both
//     as work to come, rightly, since they wake whatever the scenario does.
//   - etcd sends progress notifications every 10 minutes on watches that
//     ask for them; kube-apiserver asks only on the cacher's own watch of
//     etcd, whose bookmarks the cacher never passes on (C1). The
//     informers' watches do not ask (listwatch, as kube-apiserver's etcd3
//     watcher), so nothing of it reaches them.
//   - The etcd3 store's size estimator refreshes its key count every 1 to
//     1.5 minutes; it changes no answer.

var wallClockChecks struct {
	once sync.Once
	err  error
}

// disableWallClockChecks switches off, process-wide, the feature gates of
// k8s.io/apiserver whose loops run on the wall clock and change what a
// client is answered (see above).
func disableWallClockChecks() error {
	wallClockChecks.once.Do(func() {
		err := utilfeature.DefaultMutableFeatureGate.SetFromMap(map[string]bool{string(features.DetectCacheInconsistency): false})
		if err != nil {
			wallClockChecks.err = fmt.Errorf("apistorage: switching off kube-apiserver's cache consistency checker: %w", err)
		}
	})
	return wallClockChecks.err
}
