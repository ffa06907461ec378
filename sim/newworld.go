package sim

import (
	"github.com/cachelab/cachelab/sim/lever"
	"github.com/cachelab/cachelab/sim/scenario"
)

// worldKinds are the worlds a run can have, each once: the options that
// choose it (the first kind whose choice says yes is the run's: a
// replay, a cluster, else the server opts.Server names or the scenario
// is written for, over HTTPS with opts.Wire), its parts as the levers
// know them (package sim/lever), and its type (worlds.go says what a
// world is). A new world is a file of its own, a line here, and its
// parts in package sim/lever.
var worldKinds = []struct {
	chosen func(sc *scenario.Scenario, opts Options) bool
	world  lever.World
	make   func(r *runner) runWorld
}{
	{func(_ *scenario.Scenario, o Options) bool { return o.Replay != nil }, lever.Replay, func(r *runner) runWorld { return &replayWorld{r: r} }},
	{func(_ *scenario.Scenario, o Options) bool { return o.Cluster != nil }, lever.Cluster, func(r *runner) runWorld { return &clusterWorld{r: r} }},
	{func(sc *scenario.Scenario, o Options) bool { return cachedServer(sc, o) && o.Wire }, lever.APIServer, func(r *runner) runWorld { return newHTTPSWorld(r) }},
	{cachedServer, lever.WatchCache, func(r *runner) runWorld { return newCacheWorld(r) }},
	{func(*scenario.Scenario, Options) bool { return true }, lever.Etcd, func(r *runner) runWorld { return &etcdWorld{r: r} }},
}

// cachedServer reports whether the server opts.Server names (else the
// one sc is written for) is kube-apiserver's watch cache.
func cachedServer(sc *scenario.Scenario, opts Options) bool {
	server := opts.Server
	if server == "" {
		server = sc.WrittenFor()
	}
	return server == scenario.ServerWatchCache
}

// kindOf is the world sc runs in with opts, and its type's maker. A
// world of the run's own storage is on an external etcd with opts.Etcd's
// endpoints (lever.External), where compaction is the user's to allow.
func kindOf(sc *scenario.Scenario, opts Options) (lever.World, func(r *runner) runWorld) {
	for _, k := range worldKinds {
		if !k.chosen(sc, opts) {
			continue
		}
		w := k.world
		if w.Has(lever.EtcdKeys) && len(opts.Etcd.Endpoints) > 0 {
			w = lever.External(w)
			if opts.CompactExternalEtcd {
				w = lever.CompactingAllowed(w)
			}
		}
		return w, k.make
	}
	panic("sim: no world kind chosen; the last is always chosen")
}

// newWorld is the world the run's options name, as a type.
func (r *runner) newWorld() runWorld {
	_, newOf := kindOf(r.sc, r.opts)
	return newOf(r)
}
