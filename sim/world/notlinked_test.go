package world_test

import (
	"errors"
	"testing"

	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/sim/world"
)

// This test binary does not import package sim/full, as cachelab's plain
// build does not: a run that needs what it links in is refused before
// its first step, saying what it needs and how to build it; every other
// run is not.
func TestRunsThatNeedTheFullBuild(t *testing.T) {
	if world.Linked() != nil {
		t.Fatal("something in this test binary imports sim/full; the test needs a build without it")
	}
	cases := []struct {
		scenario string
		opts     sim.Options
		needs    string // "" when the plain build runs it
	}{
		{"relist-after-compaction", sim.Options{}, ""},
		{"watch-cache-history", sim.Options{}, "runs behind kube-apiserver's watch cache"},
		{"relist-after-compaction", sim.Options{Server: "watchcache"}, "runs behind kube-apiserver's watch cache"},
		{"watch-cache-history", sim.Options{Server: "etcd"}, ""},
		{"factory-shared-informer", sim.Options{Server: "etcd"}, "makes a shared informer factory, which is compared with client-go's SharedInformerFactory"},
	}
	for _, c := range cases {
		sc, err := sim.Load(c.scenario)
		if err != nil {
			t.Fatal(err)
		}
		err = sim.Check(sc, c.opts)
		var nl *sim.NotLinkedError
		switch {
		case c.needs == "" && err != nil:
			t.Errorf("%s with server %q: refused in the plain build: %v", c.scenario, c.opts.Server, err)
		case c.needs != "" && !errors.As(err, &nl):
			t.Errorf("%s with server %q: Check = %v, want a *sim.NotLinkedError", c.scenario, c.opts.Server, err)
		case c.needs != "" && (nl.Needs != c.needs || nl.Scenario != c.scenario):
			t.Errorf("%s with server %q: NotLinkedError %+v, want it to say it %s", c.scenario, c.opts.Server, *nl, c.needs)
		}
	}
}
