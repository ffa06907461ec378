package main

import (
	"errors"
	"fmt"
	"runtime"
	"strconv"

	"github.com/cachelab/cachelab/sim/explore"
	"github.com/cachelab/cachelab/sim/scenario"
)

// jobs is how many placements explore runs at once, and how many of
// them compute (explore.Options.Jobs, Computing): -j N, N of each; -j
// auto, what explore.AutoJobs chooses for the exploration's world (the
// scenario's, unless --server says) and the CPUs.
func (m *Main) jobs(o *exploreOptions, sc *scenario.Scenario) (most, computing int) {
	if o.jobs != autoJobs {
		return int(o.jobs), int(o.jobs)
	}
	world := o.server.value
	if world == "" {
		world = sc.WrittenFor()
	}
	computing, most = explore.AutoJobs(world, m.cpus())
	return most, computing
}

// cpus is how many CPUs the process may use (runtime.GOMAXPROCS), for
// -j auto; Main.cpusUsable in tests.
func (m *Main) cpus() int {
	if m.cpusUsable != nil {
		return m.cpusUsable()
	}
	return runtime.GOMAXPROCS(0)
}

// jobsFlag is -j: how many placements run at once, or autoJobs for
// explore.AutoJobs to choose by the world and the CPUs.
type jobsFlag int

// autoJobs is -j auto, the default.
const autoJobs jobsFlag = 0

func (j *jobsFlag) String() string {
	if *j == autoJobs {
		return "auto"
	}
	return strconv.Itoa(int(*j))
}

func (j *jobsFlag) Type() string { return "int|auto" }

func (j *jobsFlag) Set(s string) error {
	if s == "auto" {
		*j = autoJobs
		return nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 64 {
		return errors.New("want 1 to 64, or auto")
	}
	*j = jobsFlag(n)
	return nil
}

// said is how the timing line on stderr says what ran at once.
func (j jobsFlag) said(most, computing int) string {
	if j != autoJobs {
		return fmt.Sprintf("-j %d", most)
	}
	return fmt.Sprintf("-j auto (%d computing, up to %d in all)", computing, most)
}
