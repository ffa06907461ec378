// Package outsidecli is what cachelab serve and explore --serve run: a
// story played to a controller in another process (package
// controllertest). It is a package of its own so that only the full
// build of cachelab, and the command's tests, link it.
package outsidecli

import (
	"context"
	"fmt"
	"io"
	"time"

	"go.uber.org/zap"

	"github.com/cachelab/cachelab/controllertest"
)

// Job is what serve or explore --serve was asked to do.
type Job struct {
	Story      string // the story file's name
	Src        []byte // its text
	Kubeconfig string // serve: where to write the kubeconfig
	Connect    time.Duration
	Command    []string // explore --serve: the controller, run once per placement
	Faults     []string // explore --serve: the faults placed (nil for the default)
	Jobs       int
	Unowned    []string // namespaces made first, where the controller's objects need no owner
	// EtcdTempDir is where each world makes its etcd's data directory;
	// EtcdLogger takes etcd's logs (controllertest.Options).
	EtcdTempDir string
	EtcdLogger  *zap.Logger
}

// UsageError is an error in the job itself (the story, a refused
// command), found before the first step.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Usage marks the error as the job's own.
func (e *UsageError) Usage() bool { return true }

// Run plays j's story to a controller in another process: once, to the
// one the user starts (serve: no Command), or once per placement to
// Command. It prints the outcome, or the report, to stdout, and reports
// whether an invariant broke. kube-apiserver logs through klog, a line
// or more per world: a command silences it before it calls Run (klog's
// logger cannot be set while a world runs).
func Run(ctx context.Context, j Job, stdout, stderr io.Writer) (broken bool, err error) {
	story, err := controllertest.ParseStory(j.Story, j.Src)
	if err != nil {
		return false, &UsageError{err}
	}
	e := controllertest.Explore{
		Story: story,
		World: controllertest.Options{Outside: &controllertest.Outside{Connect: j.Connect},
			EtcdTempDir: j.EtcdTempDir, EtcdLogger: j.EtcdLogger},
		Faults:     j.Faults,
		Jobs:       j.Jobs,
		Namespaces: j.Unowned,
		Unowned:    j.Unowned,
	}
	if j.Command == nil {
		return serve(ctx, j, e, stdout, stderr)
	}
	e.Controller = controllertest.Command(j.Command, controllertest.CommandOptions{Output: io.Discard})
	rep, err := e.Run(ctx)
	if err != nil {
		return false, &UsageError{err}
	}
	fmt.Fprint(stdout, rep)
	return rep.Failed(), nil
}

func serve(ctx context.Context, j Job, e controllertest.Explore, stdout, stderr io.Writer) (bool, error) {
	for _, cmd := range []string{"stop", "start"} {
		if line := e.Story.Line(cmd); line > 0 {
			return false, &UsageError{fmt.Errorf("%s:%d: serve cannot %s your controller: it did not start it; explore --serve STORY -- COMMAND can", j.Story, line, cmd)}
		}
	}
	e.Controller = controllertest.Attach(controllertest.AttachOptions{
		Kubeconfig: j.Kubeconfig,
		Waiting: func(address string) {
			fmt.Fprintf(stderr, "cachelab: kube-apiserver is on https://%s; start your controller with KUBECONFIG=%s (waiting %v for it to connect and watch)\n",
				address, j.Kubeconfig, j.Connect)
		},
	})
	o := e.Play(ctx, controllertest.Placement{})
	if ctx.Err() == nil { // interrupted, the outcome is only "context canceled"
		fmt.Fprint(stdout, o)
	}
	// The controller the user started goes on, retrying a server that
	// is gone, often without a word: say that it can stop.
	fmt.Fprintf(stderr, "cachelab: the world has stopped and %s is removed: you can stop your controller\n", j.Kubeconfig)
	switch {
	case ctx.Err() != nil:
		return false, ctx.Err()
	case o.Err != nil:
		return false, fmt.Errorf("%s: %w", j.Story, o.Err)
	}
	return !o.Kept(), nil
}
