package explore

import "github.com/cachelab/cachelab/sim/scenario"

// AutoJobs is how many placements to run at once when the caller does not
// say (cachelab explore's -j auto), from what a run does with its time
// and the CPUs the process may use (runtime.GOMAXPROCS): Options.Computing
// and Options.Jobs.
//
// A run computes (its settling polls the informers, and behind the watch
// cache the goroutines of the whole process), or it waits out a relist
// backoff: 0.8 to 1.6 s of real time at first, during which it computes
// nothing, since client-go waits it on the real clock whatever clock it
// is given (REFERENCE.md F6; setClock in package sim says why the
// scenario's clock cannot stand in). So 2 runs a CPU compute, and a run
// waiting a backoff makes way for another (Options.Computing), up to
// most in all: on 2 CPUs this explored add-update-delete and
// missed-delete-tombstone (whose placements nearly all relist) faster
// than any fixed number, in both worlds, and with less CPU than 16.
//
// A waiting run costs the others nothing in the etcd world: 8 a CPU may
// wait. Behind the watch cache it does cost them: settling tells that
// the cacher has nothing in flight from a dump of every goroutine of the
// process, taken with the world stopped (apistorage.Quiescent), and a
// waiting run's goroutines (its etcd, its kube-apiserver's storage) are
// in every other run's dumps. 4 a CPU may run there; more added CPU and
// no speed.
func AutoJobs(server string, cpus int) (computing, most int) {
	cpus = max(cpus, 1)
	perCPU := 8
	if server == scenario.ServerWatchCache {
		perCPU = 4
	}
	most = min(perCPU*cpus, maxAutoJobs)
	return min(2*cpus, most), most
}

// maxAutoJobs bounds AutoJobs on a machine of many CPUs (where it has not
// been measured): every run is an embedded etcd of its own, and what the
// runs share in the process (the goroutine dumps, the garbage collector)
// grows with how many there are. 16 was explore's fixed default before
// it chose by the machine.
const maxAutoJobs = 16
