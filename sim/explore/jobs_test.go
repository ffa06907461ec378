package explore

import (
	"testing"

	"github.com/cachelab/cachelab/sim/scenario"
)

// -j auto: 4 placements a CPU in the etcd world, whose runs mostly wait;
// 2 behind the watch cache, where each run's settling dumps every
// goroutine of the process; never fewer than one CPU's worth, never more
// than 16.
func TestAutoJobs(t *testing.T) {
	for _, tc := range []struct {
		server string
		cpus   int
		want   int
	}{
		{scenario.ServerEtcd, 2, 8},
		{scenario.ServerWatchCache, 2, 4},
		{scenario.ServerEtcd, 1, 4},
		{scenario.ServerWatchCache, 1, 2},
		{scenario.ServerEtcd, 0, 4},
		{scenario.ServerWatchCache, 6, 12},
		{scenario.ServerEtcd, 8, 16},
		{scenario.ServerWatchCache, 64, 16},
	} {
		if got := AutoJobs(tc.server, tc.cpus); got != tc.want {
			t.Errorf("AutoJobs(%s, %d CPUs) = %d, want %d", tc.server, tc.cpus, got, tc.want)
		}
	}
}
