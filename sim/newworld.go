package sim

import "github.com/cachelab/cachelab/sim/lever"

// newWorld is the world the run's options name (WorldOf, the worlds as
// the levers know them), as a type: the one place that names every
// world's type (worlds.go says what a world is). A new world is a file
// of its own, a line here, and its parts in package sim/lever with the
// options that choose it in WorldOf.
func (r *runner) newWorld() runWorld {
	switch WorldOf(r.sc, r.opts).Server {
	case lever.Cluster.Server:
		return &clusterWorld{r: r}
	case lever.Replay.Server:
		return &replayWorld{r: r}
	case lever.APIServer.Server:
		return newHTTPSWorld(r)
	case lever.WatchCache.Server:
		return newCacheWorld(r)
	}
	return &etcdWorld{r: r}
}
