package controller

import "testing"

type fixedRV string

func (f fixedRV) LastStoreSyncResourceVersion() string { return string(f) }

// The guard holds a key back only while it can prove the cache older
// than the controller's write (K7, K8); a version it cannot compare ends
// the guarding of that write.
func TestGuardHoldsOnlyWhatItCanProveStale(t *testing.T) {
	for _, tc := range []struct {
		store, wrote string
		stale, kept  bool
	}{
		{store: "9", wrote: "10", stale: true, kept: true},     // older: hold back, keep the write
		{store: "10", wrote: "10", stale: false, kept: false},  // caught up: go, forget the write
		{store: "11", wrote: "10", stale: false, kept: false},  // past it
		{store: "", wrote: "10", stale: false, kept: false},    // a store that reports no version
		{store: "abc", wrote: "10", stale: false, kept: false}, // malformed
		{store: "9", wrote: "010", stale: false, kept: false},  // malformed write
	} {
		g := newGuard(fixedRV(tc.store))
		g.wrote("ns/a", tc.wrote)
		stale, _ := g.stale("ns/a")
		_, kept := g.writes["ns/a"]
		if stale != tc.stale || kept != tc.kept {
			t.Errorf("store %q, wrote %q: stale=%v kept=%v, want stale=%v kept=%v", tc.store, tc.wrote, stale, kept, tc.stale, tc.kept)
		}
	}
	g := newGuard(fixedRV("1"))
	if stale, _ := g.stale("ns/never-written"); stale {
		t.Errorf("a key this controller never wrote is stale; want it reconciled")
	}
}
