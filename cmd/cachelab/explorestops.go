package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/sim/explore"
)

// An exploration ends early as a run does (signals.go): a signal cancels
// its context, every run in progress stops and closes its etcd, and the
// process exits 128 plus the signal's number; a second signal removes
// the directory all its runs' etcds keep their data in and exits at once
// (datadir.go); a closed stdout fails the report's write, exit 141.

// exploreExitHelp is the exit status paragraph of explore's help and
// explore merge's.
const exploreExitHelp = `Exit status: 0 when every placement agreed with client-go and kept the
invariants, 1 when one did not, 2 for bad input, 3 when a run could not go
on. Stopped by a signal, explore stops its runs, removes what they made
(their embedded etcds' data directories) and exits 128 plus the signal's
number, as 'cachelab run' does: 130 for SIGINT (Ctrl-C), 143 for SIGTERM,
129 for SIGHUP, and 141 when stdout is closed by its reader (as by
'head'). A second signal, during that clean-up, ends it at once: it still
removes the etcds' data; a third ends the process whatever it is doing.`

// runsOptions are the options every run of an exploration starts from:
// each run's etcd keeps its data in one directory of the CLI's, which it
// removes however the process ends (datadir.go), and, in the process
// (runProcess), closes quickly: a placement's run is over once its etcd
// is stopped and its data gone; an etcd cluster's last connections close
// in the background (for up to about 6 s each) while the next placements
// run, and the process exits without waiting for them.
func (m *Main) runsOptions() (sim.Options, error) {
	dir, err := m.makeRunsDir()
	if err != nil {
		return sim.Options{}, runError(err)
	}
	return sim.Options{EtcdTempDir: dir, QuickClose: m.exiting, EtcdLogger: m.etcdLogger()}, nil
}

// exploreFailed is the error for an exploration that did not end: bad
// input (exit 2), a signal (128 plus its number, saying how far it had
// got), or a run that could not go on (exit 3).
func exploreFailed(ctx context.Context, err error, name string, ran, total int) error {
	var bad *explore.InputError
	switch {
	case errors.As(err, &bad):
		return usage(err)
	case signalled(ctx) && total > 0:
		return stopped(ctx, fmt.Sprintf("while exploring %s, after %d of %d placements", name, ran, total))
	case signalled(ctx):
		return stopped(ctx, fmt.Sprintf("while exploring %s, before any placement had run", name))
	}
	return runError(err)
}
