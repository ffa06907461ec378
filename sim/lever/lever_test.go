package lever_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cachelab/cachelab/sim/lever"
	"github.com/cachelab/cachelab/sim/scenario"
)

// Every command of the scenario language is a lever, and every lever a
// command: a new command cannot be added without saying what of a world
// it acts on.
func TestEveryCommandIsALever(t *testing.T) {
	if diff := cmp.Diff(scenario.CommandNames(), lever.Names()); diff != "" {
		t.Errorf("the scenario's commands (-) and the levers (+) differ:\n%s", diff)
	}
}

// A world's parts are what its levers may act on: the replay has none, a
// cluster only its live server, an external etcd neither stops nor
// compacts unless allowed; the embedded worlds have every part but the
// one of the other server.
func TestWorldsParts(t *testing.T) {
	for _, tc := range []struct {
		w          lever.World
		has, lacks lever.Need
	}{
		{lever.Replay, 0, lever.Live},
		{lever.Cluster, lever.Live, lever.OwnServer | lever.EtcdKeys | lever.EtcdNotify | lever.OwnEtcd | lever.OwnWatchCache},
		{lever.Etcd, lever.OwnEtcd | lever.EtcdHistory | lever.NoWatchCache, lever.OwnWatchCache},
		{lever.WatchCache, lever.OwnEtcd | lever.OwnWatchCache | lever.OwnAPIServers, lever.NoWatchCache},
		{lever.External(lever.WatchCache), lever.OwnWatchCache | lever.EtcdKeys, lever.OwnEtcd | lever.EtcdHistory},
		{lever.CompactingAllowed(lever.External(lever.Etcd)), lever.EtcdHistory, lever.OwnEtcd},
	} {
		for n := lever.Need(1); n <= lever.OwnAPIServers; n <<= 1 {
			if tc.has&n != 0 && !tc.w.Has(n) {
				t.Errorf("%s lacks %s", tc.w, n)
			}
			if tc.lacks&n != 0 && tc.w.Has(n) {
				t.Errorf("%s has %s", tc.w, n)
			}
		}
	}
}

// Available names the first part a world lacks, and refuses nothing a
// world has every part for.
func TestAvailable(t *testing.T) {
	for _, name := range lever.Names() {
		l := lever.Of(name)
		for _, w := range lever.Worlds {
			err := l.Available(w)
			if w.Has(l.Needs) != (err == nil) {
				t.Errorf("%s in %s: %v, though the world has its parts: %v", name, w, err, w.Has(l.Needs))
			}
			if r, ok := err.(*lever.Refused); ok && (r.Missing&l.Needs == 0 || w.Has(r.Missing)) {
				t.Errorf("%s in %s: refused for %s, which it does not need or the world has", name, w, r.Missing)
			}
		}
		if l.Needs&^lever.Live != 0 && l.OnCluster == "" && l.Available(lever.Cluster) != nil {
			t.Errorf("%s: a cluster refuses it with no reason to give", name)
		}
	}
}
