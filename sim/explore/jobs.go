package explore

import "github.com/cachelab/cachelab/sim/scenario"

// AutoJobs is how many placements to run at once when the caller does not
// say (cachelab explore's -j auto): a multiple of cores, the CPUs the
// process may use (runtime.GOMAXPROCS), chosen by what the world's runs
// do with their time, and at most maxAutoJobs.
//
// In the etcd world a run mostly waits: its settling polls counters
// every few milliseconds, and a placement that makes the informers
// relist waits out client-go's relist backoff, 0.8 to 1.6 s of real time
// at first, during which it computes nothing (client-go waits it on the
// real clock whatever clock it is given: REFERENCE.md F6, and
// clientGoInformer's setClock in package sim). So runs overlap well
// beyond the cores: 4 per core.
//
// Behind the watch cache a run computes more, and the more runs there
// are, the more each computes: settling tells that the cacher has nothing
// in flight from a dump of every goroutine of the process, taken with
// the world stopped (apistorage.Quiescent), at every poll. Each dump
// holds every run's goroutines (an etcd and a kube-apiserver's storage
// each), so each run added makes every other run's dumps longer and stops
// them all more often. On 2 cores, add-update-delete behind the watch
// cache took 3 times the CPU at 16 runs as at 2, and was slower; 2 per
// core keeps a run ready while another waits, and no more.
func AutoJobs(server string, cores int) int {
	perCore := 4
	if server == scenario.ServerWatchCache {
		perCore = 2
	}
	return min(max(cores, 1)*perCore, maxAutoJobs)
}

// maxAutoJobs bounds AutoJobs on a machine of many cores: every run is
// an embedded etcd of its own (and behind the watch cache, a
// kube-apiserver's storage), and what the runs share in the process (the
// goroutine dumps, the garbage collector) grows with how many there are.
// 16 was explore's fixed default before it chose by the machine.
const maxAutoJobs = 16
