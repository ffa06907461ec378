package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/cachelab/cachelab/cluster"
	"github.com/cachelab/cachelab/recording"
	"github.com/cachelab/cachelab/sim/trace"
)

type recordOptions struct {
	kubeconfig, kubeContext string
	resource                string
	namespace               string
	labels, fields          string
	duration                time.Duration
	durationSet             bool // --for was given: 0 is then not "until Ctrl-C"
	full                    bool
}

func (m *Main) recordCommand() *cobra.Command {
	o := &recordOptions{}
	cmd := &cobra.Command{
		Use:   "record --kubeconfig PATH [-n NAMESPACE] [--for 10m] > session.jsonl",
		Short: "Record what an informer receives from your cluster, to replay it in the lab",
		Long: `Record runs cachelab's informer of pods (or --resource configmaps,
secrets or deployments) on your cluster (through the kubeconfig kubectl reads, or
--kubeconfig and --context) and writes what it
receives to stdout as JSON lines, one fact per line, as it comes: each try
of each HTTP request and its status (as kubectl -v=6 shows them), each
LIST's page, each WATCH and its events with their resourceVersions, the
moment each reached the informer, and the calls its handler got; at the
end, the informer's cache. It stops after --for, or at Ctrl-C.

Objects are kept as their kind, names, namespaces, labels and
resourceVersions (and a deletionTimestamp once set) only: no spec, no
status, no managed fields, and no annotations but the one that marks the
end of a watch-list's initial events. --full keeps them whole. Record only reads; it writes nothing to the cluster.

'cachelab replay session.jsonl' plays the session back to cachelab's
informer and client-go's, from a server that answers as the recorded one
did, at the same moments, and compares them at every step.

` + recordExitHelp,
		Example: `  cachelab record -n default --for 10m > session.jsonl
  cachelab record --resource configmaps -n default --for 10m > configmaps.jsonl
  cachelab record --kubeconfig ~/.kube/kind --context kind-kind -l app=web > session.jsonl
  cachelab replay session.jsonl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.durationSet = cmd.Flags().Changed("for")
			return m.record(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.kubeconfig, "kubeconfig", "", "the kubeconfig to reach the cluster with (default: $KUBECONFIG, else ~/.kube/config)")
	f.StringVar(&o.kubeContext, "context", "", "the kubeconfig's context, instead of its current one")
	f.StringVar(&o.resource, "resource", "pods", "the resource to record: pods, configmaps, secrets or deployments")
	f.StringVarP(&o.namespace, "namespace", "n", "", "record one namespace (default: every namespace)")
	f.StringVarP(&o.labels, "selector", "l", "", "a label selector, as kubectl's -l")
	f.StringVar(&o.fields, "field-selector", "", "a field selector, as kubectl's --field-selector")
	f.DurationVar(&o.duration, "for", 0, "how long to record (default: until Ctrl-C)")
	f.BoolVar(&o.full, "full", false, "keep whole objects, not only their names, labels and resourceVersions")
	return cmd
}

// recordExitHelp is the exit status paragraph of record's help.
const recordExitHelp = `Exit status: 0 when the recording ended after --for; 128 plus the
signal's number when a signal ended it: 130 for SIGINT (Ctrl-C), 143 for
SIGTERM, 129 for SIGHUP; the session is whole all the same (its end line
names the signal), and replays. 2 for bad input, found before anything
is reached (an unknown flag, an argument, a --resource other than pods,
configmaps, secrets or deployments, a
--for that is not positive, no kubeconfig, a kubeconfig that does not
parse, has no current context or not the --context given); 3 when the
cluster cannot be reached, or stdout cannot be written (141 when its
reader closed it, as 'head' does).`

// record checks the options, reaches the cluster and records until
// --for has passed or a signal comes; either way the session ends with
// the informer's cache and an end line. After --for it exits 0; after a
// signal, 128 plus its number, as every command a signal stops does, and
// says that the session is whole all the same.
func (m *Main) record(ctx context.Context, o *recordOptions) error {
	res, ok := recording.ResourceNamed(o.resource)
	switch {
	case !ok:
		return usage(fmt.Errorf("--resource: %w", recording.Replayable(o.resource)))
	case o.duration <= 0 && o.durationSet:
		return usage(fmt.Errorf("--for %v: want a positive duration such as 10m (without --for, record goes on until Ctrl-C)", o.duration))
	}
	c, err := cluster.Open(ctx, cluster.Options{Kubeconfig: o.kubeconfig, Context: o.kubeContext})
	if err != nil {
		if ctx.Err() != nil {
			return stopped(ctx, "while reaching the cluster")
		}
		return clusterFailed(err)
	}
	cfg, err := c.Wire()
	if err != nil {
		return runError(err)
	}
	if o.duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, o.duration, fmt.Errorf("--for %v passed", o.duration))
		defer cancel()
	}
	// A signal ends the recording as --for does: the cache and the end
	// line are written, and the session is whole.
	lines := 0
	out := &countingWriter{w: m.Stdout}
	began := m.Now()
	// The cluster's version is the server's word: escaped (trace.Escape).
	fmt.Fprintf(m.Stderr, "recording %s %s from %s; Ctrl-C ends it\n", o.resource, scopeWords(o), trace.Escape(c.Describe()))
	err = recording.Record(ctx, cfg, recording.Options{Resource: res, Namespace: o.namespace, Labels: o.labels, Fields: o.fields,
		Full: o.full, Server: c.Host(), Now: m.Now, Written: func(recording.Line) { lines++ }}, out)
	if err != nil {
		return writeError(err, "while recording")
	}
	fmt.Fprintf(m.Stderr, "recorded %d lines in %v\n", lines, m.Now().Sub(began).Round(time.Millisecond))
	replays := "and replays"
	if lines > recording.MaxLines || out.n > recording.MaxSize {
		// Said, not refused: the session is what the cluster sent.
		m.errorf("cachelab: the session is %d lines and %d bytes, more than a replay reads (%d lines, 32 MiB): next time, %s\n",
			lines, out.n, recording.MaxLines, recording.TooMuch)
		replays = "but is too long to replay"
	}
	if sig := (interrupted{}); errors.As(context.Cause(ctx), &sig) {
		return &exitError{code: sig.code(), err: fmt.Errorf("%v while recording: the session is whole (its end line says so) %s", sig, replays)}
	}
	return nil
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	k, err := c.w.Write(b)
	c.n += int64(k)
	return k, err
}

func scopeWords(o *recordOptions) string {
	s := "in every namespace"
	if o.namespace != "" {
		s = "in namespace " + o.namespace
	}
	if o.labels != "" {
		s += " with labels " + o.labels
	}
	if o.fields != "" {
		s += " with fields " + o.fields
	}
	return s
}
