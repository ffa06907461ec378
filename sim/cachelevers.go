package sim

import (
	"fmt"

	"github.com/cachelab/cachelab/sim/trace"
)

// The levers of the watch-cache world: kube-apiserver's cache falling
// behind etcd, and catching up. A real cache lags etcd by the moment it
// takes to take in each event; these levers stretch that moment for as
// long as a scenario needs to show what a request answered from the cache
// then gets.

var (
	cmdHoldCache = &command{usage: "hold-cache",
		help: "the watch cache stops taking in etcd's events: it falls behind etcd, and requests it serves (LIST at rv 0, watches) see the older state, until release-cache (watch-cache world only)",
		run:  holdCache}
	cmdRestartAPIServer = &command{usage: "restart-apiserver",
		help: "kube-apiserver restarts: its watch cache ends every watch and starts again, listing etcd; after hold-cache it stays not ready (a WATCH gets 429) until release-cache (watch-cache world only)",
		run:  restartAPIServer}
	cmdReleaseCache = &command{usage: "release-cache",
		help: "the watch cache takes in every event it was held from, and catches up with etcd (watch-cache world only)",
		run:  releaseCache}
)

func holdCache(r *runner, a args) error {
	rev, err := r.revision()
	if err != nil {
		return err
	}
	r.api.HoldCache()
	r.note(trace.LayerCache, "", fmt.Sprintf("watch cache held at rv %d: etcd's events wait until release-cache", rev))
	return nil
}

func releaseCache(r *runner, a args) error {
	rev, err := r.revision()
	if err != nil {
		return err
	}
	r.api.ReleaseCache()
	r.etcdChanged() // a LIST held at an unready cache goes again
	r.note(trace.LayerCache, "", fmt.Sprintf("watch cache released: it catches up with etcd at rv %d", rev))
	return nil
}

func restartAPIServer(r *runner, a args) error {
	if err := r.api.RestartCache(); err != nil {
		return err
	}
	if r.api.Ready() {
		r.note(trace.LayerCache, "", "kube-apiserver restarted: its watch cache ended every watch and listed etcd again")
	} else {
		r.note(trace.LayerCache, "", "kube-apiserver restarted: its watch cache ended every watch; it is not ready until it has listed etcd")
	}
	return nil
}
