package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/cachelab/cachelab/sim"
)

// A controller in another process: serve and explore --serve. They run
// package controllertest's worlds, kube-apiserver over HTTPS in process,
// which only the full build links (serve_full.go sets outside); a plain
// build says so and relinks (relink.go).

// outsideJob is what serve or explore --serve was asked to do: the
// fields of outsideJob, which only a full build links.
type outsideJob struct {
	Story      string
	Src        []byte
	Kubeconfig string
	Connect    time.Duration
	Command    []string
	Faults     []string
	Jobs       int
	Unowned    []string
	// Where the worlds' etcds make their data directories: the CLI's
	// own (datadir.go), removed however the process ends.
	EtcdTempDir string
	EtcdLogger  *zap.Logger
}

// outside runs a job; nil in a plain build (outsidecli.Run in a full
// one, serve_full.go). An error of the job itself has a Usage method.
var outside func(ctx context.Context, j outsideJob, stdout, stderr io.Writer) (broken bool, err error)

func (m *Main) serveCommand() *cobra.Command {
	j := outsideJob{}
	cmd := &cobra.Command{
		Use:   "serve <story file> --kubeconfig-out FILE",
		Short: "Start kube-apiserver for your controller, in any language, play a story to it, and check it",
		Long: `Serve starts a world (an embedded etcd, kube-apiserver's storage and watch
cache, and kube-apiserver over HTTPS on loopback), writes a kubeconfig
for it to FILE, and waits for a controller to connect with it and watch
(--connect, 2 minutes): start yours, in another terminal, with
KUBECONFIG=FILE. It then plays the story (a scenario file of writes,
clock steps and faults, as 'explore --serve' writes one for each
placement) to the controller, settling after each step, and prints what
happened: the watch events the controller was handed, its requests, the
garbage collector's deletes; and the verdicts of the invariants any
controller should keep (converges, no-stale-writes, no-orphans,
no-duplicates, no-finalizer-left).

The world serves pods, configmaps, secrets, deployments, namespaces and
the custom resources of the story's crd steps. A story's stop and start
are refused: the world did not start your controller and cannot start it
again ('explore --serve -- COMMAND' can). FILE must not exist; it is
removed when serve ends, on success, failure or a signal.

See docs/your-controller.md.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if j.Kubeconfig == "" {
				return usage(errors.New("serve needs --kubeconfig-out FILE: where to write the kubeconfig your controller connects with"))
			}
			if err := readStory(&j, args[0]); err != nil {
				return err
			}
			if _, err := os.Lstat(j.Kubeconfig); err == nil {
				return usage(fmt.Errorf("--kubeconfig-out %s: the file is there; serve writes only a new file (it removes it when it ends)", j.Kubeconfig))
			}
			if st, err := os.Stat(filepath.Dir(j.Kubeconfig)); err != nil || !st.IsDir() {
				return usage(fmt.Errorf("--kubeconfig-out %s: no directory %s to write it in", j.Kubeconfig, filepath.Dir(j.Kubeconfig)))
			}
			return m.runOutside(cmd.Context(), j)
		},
	}
	f := cmd.Flags()
	f.StringVar(&j.Kubeconfig, "kubeconfig-out", "", "where to write the kubeconfig for your controller (a new file; removed at the end)")
	f.DurationVar(&j.Connect, "connect", 2*time.Minute, "how long to wait for a controller to connect and watch")
	f.StringSliceVar(&j.Unowned, "unowned", nil, unownedUsage)
	return cmd
}

const unownedUsage = "namespaces to make before the story, where your controller keeps objects that no object owns " +
	"(a registry of its own): no-orphans does not count them"

// readStory reads the story file into j.
func readStory(j *outsideJob, path string) error {
	src, err := os.ReadFile(path)
	if err != nil {
		return usage(fmt.Errorf("the story: %w", err))
	}
	j.Story, j.Src = path, src
	return nil
}

// runOutside runs j in the full build, or asks for it.
func (m *Main) runOutside(ctx context.Context, j outsideJob) error {
	if outside == nil {
		return &sim.NotLinkedError{Scenario: j.Story, Needs: "runs a controller against kube-apiserver"}
	}
	dir, err := m.makeRunsDir()
	if err != nil {
		return runError(err)
	}
	defer m.dropDataDir() // after every world has closed: Run waits for them
	j.EtcdTempDir, j.EtcdLogger = dir, m.etcdLogger()
	broken, err := outside(ctx, j, m.Stdout, m.Stderr)
	switch {
	case errors.As(err, new(interface{ Usage() bool })):
		return usage(err)
	case ctx.Err() != nil:
		return ctx.Err()
	case err != nil:
		return runError(err)
	case broken:
		return &exitError{code: exitDiverged, err: fmt.Errorf("✗ %s: your controller broke an invariant (above)", j.Story)}
	}
	return nil
}

// exploreServe is explore --serve STORY -- COMMAND [ARG...].
func (m *Main) exploreServe(cmd *cobra.Command, args []string, o *exploreOptions) error {
	dash := cmd.ArgsLenAtDash()
	if dash != 1 || len(args) < 2 {
		return usage(errors.New("explore --serve takes a story file, then -- and the command that runs your controller: explore --serve STORY -- COMMAND [ARG...]"))
	}
	for _, name := range []string{"max-faults", "between-steps", "sample", "sample-seed", "seed", "plant", "out", "output", "shard", "stack", "server"} {
		if cmd.Flags().Changed(name) {
			return usage(fmt.Errorf("--%s is explore's own, not explore --serve's: --serve takes --faults and --jobs", name))
		}
	}
	j := outsideJob{Command: args[1:], Jobs: int(o.jobs), Unowned: o.unowned}
	if cmd.Flags().Changed("faults") {
		j.Faults = strings.Split(o.faults, ",")
	}
	if err := readStory(&j, args[0]); err != nil {
		return err
	}
	return m.runOutside(cmd.Context(), j)
}
