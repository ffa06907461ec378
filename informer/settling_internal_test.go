package informer

import "testing"

// A registration's sync bookkeeping counts as work in flight (Backlog's
// SyncPending) from the moment the informer has synced until HasSynced
// turns true, including the moment between upstreamSynced storing that
// it heard and closing done (a settle once saw the registration idle and
// unsynced there, under -race); not when an initial add panicked, which
// leaves the registration unsynced for good.
func TestSyncTrackerSettling(t *testing.T) {
	upstream := make(chan struct{})
	tr := newSyncTracker(upstream)
	tr.start()
	if tr.settling() {
		t.Error("settling before the informer synced")
	}
	close(upstream)
	if !tr.settling() {
		t.Error("not settling: the informer synced and the registration has not heard")
	}
	tr.upstreamOK.Store(true) // upstreamSynced's first half; an add is in flight
	if tr.settling() {
		t.Error("settling with an initial add in flight (it may have panicked: the handler's backlog counts it otherwise)")
	}
	tr.inFlight.Add(-1) // the add returned, and finished has not closed done yet
	if !tr.settling() {
		t.Error("not settling between the last add's return and done closing")
	}
	tr.once.Do(func() { close(tr.done) })
	if tr.settling() || !tr.hasSynced() {
		t.Error("settling after done closed")
	}
}
