package explore

import (
	"testing"

	"github.com/cachelab/cachelab/sim/scenario"
)

// -j auto: 2 runs a CPU computing, and while some wait out a relist
// backoff, up to 8 a CPU in all in the etcd world and 4 behind the watch
// cache, where a waiting run's goroutines weigh on every other run's
// settling; never less than one CPU's worth, never more than 16.
func TestAutoJobs(t *testing.T) {
	for _, tc := range []struct {
		server          string
		cpus            int
		computing, most int
	}{
		{scenario.ServerEtcd, 2, 4, 16},
		{scenario.ServerWatchCache, 2, 4, 8},
		{scenario.ServerEtcd, 1, 2, 8},
		{scenario.ServerWatchCache, 1, 2, 4},
		{scenario.ServerEtcd, 0, 2, 8},
		{scenario.ServerWatchCache, 3, 6, 12},
		{scenario.ServerEtcd, 8, 16, 16},
		{scenario.ServerWatchCache, 64, 16, 16},
	} {
		if computing, most := AutoJobs(tc.server, tc.cpus); computing != tc.computing || most != tc.most {
			t.Errorf("AutoJobs(%s, %d CPUs) = %d computing, %d in all; want %d, %d", tc.server, tc.cpus, computing, most, tc.computing, tc.most)
		}
	}
}
