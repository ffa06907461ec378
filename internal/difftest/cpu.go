package difftest

import (
	"syscall"
	"testing"
	"time"
)

// CPUMeter reports the process's CPU time (user+system, GC included) per
// op as "cpu-ns/op". On a shared machine a benchmark that waits for a core
// is slower by the clock but not by this, so it is the figure to compare
// when the machine is busy. Start it just before b.Loop.
type CPUMeter struct {
	start, paused, pausedAt time.Duration
}

// StartCPU starts a CPUMeter.
func StartCPU() *CPUMeter { return &CPUMeter{start: processCPU()} }

// Stop and Restart go with b.StopTimer and b.StartTimer: the CPU time
// between them is not counted.
func (m *CPUMeter) Stop() { m.pausedAt = processCPU() }

// Restart counts CPU time again after Stop.
func (m *CPUMeter) Restart() { m.paused += processCPU() - m.pausedAt }

// Report must run after b.Loop has returned false (b.N is then final).
func (m *CPUMeter) Report(b *testing.B) {
	b.ReportMetric(float64(processCPU()-m.start-m.paused)/float64(b.N), "cpu-ns/op")
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
