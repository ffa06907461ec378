package explore

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/cachelab/cachelab/internal/scalescenario"
	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/sim/scenario"
)

// BenchmarkExplore measures what exploration costs: every single-fault
// placement (the default faults, disconnect, close-watch and compact,
// in the etcd world) of a small built-in scenario and of a 1,000-object
// one (scalescenario.Text), with 8 and 32 placements at once. It reports
// placements per second, and the CPU time (user and system, of the whole
// process) each placement costs against one plain run of the same
// scenario (cpu-ratio):
//
//	go test ./sim/explore -run XXX -bench Explore -benchtime 1x -count 3
//
// In the etcd world a run mostly waits (settling, and client-go's relist
// backoff, which waits real time, 0.8-1.6 s), so workers overlap beyond
// the cores, though the CPU a placement costs grows with how many run at
// once (AutoJobs).
func BenchmarkExplore(b *testing.B) {
	small, err := sim.Load("add-update-delete")
	if err != nil {
		b.Fatal(err)
	}
	large, err := scenario.Parse("scale-1000.txt", []byte(scalescenario.Text(1000)))
	if err != nil {
		b.Fatal(err)
	}
	for _, sc := range []*scenario.Scenario{small, large} {
		run := sim.Options{Server: scenario.ServerEtcd, Seed: 1}
		c0 := cpuTime()
		if _, err := sim.Run(context.Background(), sc, run); err != nil {
			b.Fatal(err)
		}
		once := cpuTime() - c0
		for _, jobs := range []int{8, 32} {
			b.Run(fmt.Sprintf("%s/j=%d", sc.Name, jobs), func(b *testing.B) {
				var placed int
				t0, c0 := time.Now(), cpuTime()
				for b.Loop() {
					ex, err := Run(context.Background(), sc, Options{Jobs: jobs, Run: run})
					if err != nil {
						b.Fatal(err)
					}
					placed += ex.Run
				}
				took, cpu := time.Since(t0), cpuTime()-c0
				b.ReportMetric(float64(placed)/took.Seconds(), "placements/s")
				b.ReportMetric(float64(cpu.Milliseconds())/float64(placed), "cpu-ms/placement")
				b.ReportMetric(cpu.Seconds()/float64(placed)/once.Seconds(), "cpu-ratio")
			})
		}
	}
}

// cpuTime is the CPU time (user and system) the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
