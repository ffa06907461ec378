package informer

import (
	"context"
	"time"

	"k8s.io/utils/clock"
)

// InformerSynced is a HasSynced function: an informer's, or a
// registration's.
type InformerSynced func() bool

// syncedPollPeriod is how often WaitForCacheSync asks, as in client-go.
const syncedPollPeriod = 100 * time.Millisecond

// WaitForCacheSync waits until every synced function reports true, asking
// at once and then every 100 ms of c (the real clock if nil). It returns
// false if ctx ends first. Controllers call it before they start workers,
// so that they never act on a half-filled cache.
func WaitForCacheSync(ctx context.Context, c clock.Clock, synced ...InformerSynced) bool {
	if c == nil {
		c = clock.RealClock{}
	}
	for {
		if allSynced(synced) {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-c.After(syncedPollPeriod):
		}
	}
}

func allSynced(synced []InformerSynced) bool {
	for _, f := range synced {
		if !f() {
			return false
		}
	}
	return true
}
