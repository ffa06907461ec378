package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cachelab/cachelab/sim/explore"
	"github.com/cachelab/cachelab/sim/scenario"
)

// -j auto, the default, chooses by the exploration's world (the
// scenario's, unless --server says) and the CPUs: on 2, 4 placements
// computing at once, and up to 16 while some wait out a relist backoff
// in the etcd world, 8 behind the watch cache (explore.AutoJobs says
// why). -j N is N at once, waiting or not. The timing line on stderr
// says which. Before, every exploration ran 16 at once, whatever its
// world and the machine.
func TestExploreJobsFollowTheWorldAndTheCPUs(t *testing.T) {
	errStop := errors.New("test: stopped before the runs")
	for _, tc := range []struct {
		args            []string
		most, computing int
		line            string // the end of stderr, for an exploration that runs
	}{
		{[]string{"add-update-delete"}, 8, 4, " at -j auto (4 computing, up to 8 in all)\n"}, // "# Server: any": behind the watch cache
		{[]string{"add-update-delete", "--server", "etcd"}, 16, 4, " at -j auto (4 computing, up to 16 in all)\n"},
		{[]string{"add-update-delete", "-j", "auto", "--server", "etcd"}, 16, 4, " at -j auto (4 computing, up to 16 in all)\n"},
		{[]string{"add-update-delete", "-j", "3"}, 3, 3, " at -j 3\n"},
		{[]string{"missed-delete-tombstone"}, 16, 4, ""}, // "# Server: etcd"
		{[]string{"missed-delete-tombstone", "--server", "watchcache"}, 8, 4, ""},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			c := newCLI("", false, nil)
			c.cpusUsable = func() int { return 2 }
			var most, computing int
			c.exploreRun = func(ctx context.Context, sc *scenario.Scenario, o explore.Options) (*explore.Exploration, error) {
				most, computing = o.Jobs, o.Computing
				if tc.line == "" {
					return nil, errStop
				}
				return explore.Run(ctx, sc, o)
			}
			args := append([]string{"explore"}, tc.args...)
			args = append(args, "--faults", "close-watch", "--sample", "1")
			if tc.line == "" {
				c.run(t, exitRunError, args...)
			} else {
				c.run(t, exitOK, args...)
			}
			if most != tc.most || computing != tc.computing {
				t.Errorf("placements at once: %d, %d of them computing; want %d, %d", most, computing, tc.most, tc.computing)
			}
			if !strings.HasSuffix(c.stderr.String(), tc.line) {
				t.Errorf("stderr %q, want it to end with %q", c.stderr.String(), tc.line)
			}
		})
	}
}

// -j takes 1 to 64 or auto, and says so; the help names auto as the
// default.
func TestExploreJobsFlag(t *testing.T) {
	for _, arg := range []string{"0", "65", "many"} {
		c := newCLI("", false, nil)
		c.run(t, exitUsage, "explore", "add-update-delete", "-j", arg)
		if want := `invalid argument "` + arg + `" for "-j, --jobs" flag: want 1 to 64, or auto`; !strings.Contains(c.stderr.String(), want) {
			t.Errorf("-j %s: stderr %q, want it to say %q", arg, c.stderr.String(), want)
		}
	}
	c := newCLI("", false, nil)
	c.run(t, exitOK, "explore", "--help")
	if !strings.Contains(c.stdout.String(), "at most 16 (default auto)") {
		t.Errorf("explore --help does not name auto as -j's default:\n%s", c.stdout.String())
	}
}
