package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/diff"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/cachelab/cachelab/cluster"
	"github.com/cachelab/cachelab/informer"
	"github.com/cachelab/cachelab/listwatch"
	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/sim/scenario"
	"github.com/cachelab/cachelab/sim/trace"
)

// runOptions are the flags of `cachelab run`.
type runOptions struct {
	impl          choice // whose trace to print
	output        choice // text, json or html (with htmlFile)
	htmlFile      string
	stack         choice // "" keeps the scenario's own
	server        choice // "" keeps the scenario's own
	seed          uint64
	plant         string
	detector      choice // --consistency-detector: "" keeps the scenario's own
	step          bool
	etcd          listwatch.ClientOptions // --etcd-* and --dial-timeout (etcd.go)
	settleTimeout time.Duration
	rewrite       bool
	members       int        // --etcd-members: 0 keeps the scenario's etcd
	compactEtcd   bool       // --allow-compacting-external-etcd
	only          layersFlag // --only: the layers to show
	full          bool       // --full: every line of a large step, unsummarized
	progress      choice     // --progress (hidden): auto, always, never
	object        objectFlag // --object: the one object to show
	kubeconfig    string     // --kubeconfig: run on that cluster
	kubeContext   string     // --context: the kubeconfig's context
	replay        bool       // cachelab replay: the argument is a session file (replay.go)
}

// onCluster reports whether the run is on a cluster: --kubeconfig,
// --context, or --server cluster (the kubeconfig kubectl reads).
func (o *runOptions) onCluster() bool {
	return o.kubeconfig != "" || o.kubeContext != "" || o.server.value == serverCluster
}

func (m *Main) runCommand() *cobra.Command {
	o := &runOptions{
		impl:     choice{value: "cachelab", allowed: []string{"cachelab", "client-go", "both"}},
		output:   choice{value: "text", allowed: []string{"text", "json", "html", "mermaid"}},
		stack:    choice{allowed: []string{string(informer.Default), string(informer.Classic)}},
		server:   choice{allowed: []string{scenario.ServerWatchCache, scenario.ServerEtcd, serverAPIServer, serverCluster}},
		progress: choice{value: "auto", allowed: []string{"auto", "always", "never"}},
		detector: choice{allowed: []string{sim.DetectorOn, sim.DetectorOff}},
	}
	cmd := &cobra.Command{
		Use:   "run <scenario name or file>",
		Short: "Run a scenario on cachelab and client-go and print the trace",
		Long: `Run plays a scenario, built-in (see 'cachelab scenarios') or from a file, to
cachelab's informer and to client-go's, side by side over one etcd: an
embedded one on loopback ports the kernel picks, or --etcd-endpoints. After
each step it waits until both informers have settled, compares everything
they did, and prints the step as soon as it is known. It stops at the first
step where client-go differs from cachelab, and prints the difference.

The trace is deterministic: the same scenario, stack and seed print the same
bytes on every run, so traces can be diffed. How long the run took goes to
stderr.

A scenario file says, after each command's "----", what the step should
print. When any step has expected output, run checks every step against it
and stops at the first that printed something else (exit 1), showing the
difference; a file whose blocks are all empty runs unchecked. --rewrite
writes what each step printed into the file instead, so a scenario can be
written as commands first and its expectations filled in by a run. --stack,
--etcd-endpoints and --etcd-members turn the check off: a file is written
for its own stack and a fresh etcd of its own size.

--etcd-members 3 (or 5) runs on an embedded etcd cluster on loopback; a
scenario that starts with etcd-cluster asks for one itself, and stops,
starts and moves the leadership of its members (cachelab scenarios
--commands).

Every step is checked against the run's options before the first one runs:
a step that --server, --etcd-members or --etcd-endpoints leaves no way to
carry out (a watch-cache lever without the watch cache, a member lever on
one member, ...) is refused with its file:line (exit 2).

With --etcd-endpoints (or $ETCDCTL_ENDPOINTS) the run uses an etcd of your
own: it checks the endpoints in turn, each within --dial-timeout, until one
answers, and says for each one that does not what went wrong. The run keeps
to its own key prefix and removes it at the end. A lever that needs the
embedded etcd (restart-etcd, etcd-snapshot, etcd-restore, etcd-wipe, the
cluster levers) is refused there before the first step, and so is
compact, because etcd's compaction is global: it would discard every
application's history, not only the run's, so it runs there only with
--allow-compacting-external-etcd. As with etcdctl, the
ETCDCTL_ENDPOINTS, ETCDCTL_CACERT, ETCDCTL_CERT, ETCDCTL_KEY and
ETCDCTL_DIAL_TIMEOUT environment variables stand in for flags not given (the
TLS ones only when there are endpoints).

The text trace is for people: a step with more than 100 lines of one layer
and kind shows the first 5 and a line that counts the rest (--full prints
every line); on a terminal, lines wrap at its width, at spaces, and a long
step shows a progress line on stderr until it ends. The expected output a
scenario file is checked against, and what --rewrite writes, is always
every line. CACHELAB_TERM_WIDTH=N wraps at N columns (0: not at all)
whether or not stdout is a terminal.

A scenario file must be a regular file of at most 1 MiB: a named pipe, a
directory or a device is refused. A run never writes over it: --output
html= naming it (by any of its names) and a stdout that goes into it are
refused, and every file the run will write is checked before the first
step.

` + plantHelp() + `

` + exitHelp + `

When a step fails or client-go differs, the message names the step's
file:line.`,
		Example: `  cachelab run add-update-delete
  cachelab run relist-after-compaction --impl both --stack classic
  cachelab run ./my-scenario.txt --output json
  cachelab run relist-after-compaction --output html=run.html`,
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(args) == 0:
				return errors.New("run needs a scenario: a built-in name ('cachelab scenarios' lists them) or a scenario file, e.g. cachelab run add-update-delete")
			case len(args) > 1:
				return fmt.Errorf("run takes one scenario, got %d: %s", len(args), strings.Join(args, " "))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			out := &outcome{began: m.Now(), scenario: args[0]}
			style, err := m.textStyle(o)
			p := m.newPrinter(o, style)
			if err == nil {
				err = m.etcdFromEnv(cmd, &o.etcd)
			}
			if err != nil {
				err = usage(err)
			} else {
				err = m.run(cmd.Context(), args[0], o, p, out)
			}
			// Said as Run will say it, so that a JSON stream's summary
			// gives the exit status the process ends with.
			return p.end(ended(cmd.Context(), cmd, err), out, m.Now())
		},
	}
	f := cmd.Flags()
	traceFlags(f, o)
	f.Var(&o.server, "server", "the kube-apiserver the informers talk to, instead of the scenario's own (its \"# Server:\" line): "+
		"watchcache (kube-apiserver's watch cache, k8s.io/apiserver's own, in front of etcd), etcd (the watch cache off: "+
		"every request read from etcd), or apiserver (the watch cache behind kube-apiserver over HTTPS, in process: each "+
		"informer talks HTTP through its own implementation's client, and the trace's wire layer shows each request; "+
		"the scenario's expected output is checked without those lines), or cluster (your own cluster, as --kubeconfig, "+
		"through the kubeconfig kubectl reads: $KUBECONFIG, else ~/.kube/config). A scenario that says \"any\", or nothing and pulls no etcd-only lever, runs behind "+
		"the watch cache, as in a cluster")
	f.StringVar(&o.kubeconfig, "kubeconfig", "", "run on the cluster this kubeconfig reaches (kind, minikube, a test cluster): in a namespace "+
		"the run makes there and deletes at its end, never anything outside it; both informers talk to the cluster's kube-apiserver "+
		"over HTTPS, and the writes go through its API. Levers that need the server's insides (compact, hold-cache, the etcd levers, ...) "+
		"are refused before the first step. A cluster's trace differs from run to run (resourceVersions, the namespace's name, timing): "+
		"client-go is compared step by step as anywhere (docs/your-cluster.md)")
	f.StringVar(&o.kubeContext, "context", "", "the kubeconfig's context to run on, instead of its current one (implies the cluster: "+
		"--kubeconfig, or $KUBECONFIG, else ~/.kube/config)")
	f.StringVar(&o.plant, "plant", "", "plant a known bug in cachelab's side, to see the comparison catch it: "+plantNames())
	f.Var(&o.detector, "consistency-detector", "on or off: the data consistency detector of both sides (client-go's, and cachelab's "+
		"consistencydetector), instead of the scenario's own (its \"# Env: "+scenario.EnvDetector+"=true\" line): with it on, "+
		"each watch-list is followed by a LIST of its resourceVersion, compared with what the watch-list gave; on a difference "+
		"the reflector panics, which the trace shows as a log line on each side, and the simulator stops that informer where the process would end")
	f.BoolVar(&o.rewrite, "rewrite", false, "write what each step printed into the scenario file's expected-output blocks, "+
		"instead of checking them (a file only; it is rewritten once every step has run and client-go agreed, in place: through a symlink, "+
		"keeping its hard links and its mode; a file marked read-only is refused before the run)")
	etcdFlags(cmd, &o.etcd)
	f.BoolVar(&o.compactEtcd, "allow-compacting-external-etcd", false, "let the scenario's compact steps compact the etcd of "+
		"--etcd-endpoints. etcd's compaction is global: every application's history before that revision is gone, not only "+
		"the run's keys, so without this flag such a scenario is refused before its first step")
	f.IntVar(&o.members, "etcd-members", 0, "run on an embedded etcd of this many members: 1, or a cluster of 3 or 5 on loopback, "+
		"instead of the scenario's own (a scenario that starts with etcd-cluster asks for a cluster)")
	return cmd
}

// traceFlags are the flags of what a run shows and how it settles, which
// run and replay share; their help is each command's own (o.replay).
func traceFlags(f *pflag.FlagSet, o *runOptions) {
	stackHelp := "the informer stack, instead of the scenario's own (start stack=...): default (RealFIFO, watch-list) or classic (DeltaFIFO, LIST then WATCH)"
	fullHelp := fmt.Sprintf("print every line of every step: without it, a step's alike lines (one layer, kind and shape) that number over %d "+
		"show as their first %d and a line that counts the rest (text only; what a scenario file is checked against, and what --rewrite writes, is always every line)",
		summaryLimit, trace.SummaryHead)
	from := "etcd"
	if o.replay {
		stackHelp = "the informer stack both sides replay with, whatever the recorded informer's was (the server answers a LIST and a watch-list alike): " +
			"default (RealFIFO, watch-list) or classic (DeltaFIFO, LIST then WATCH)"
		fullHelp = fmt.Sprintf("print every line of every step: without it, a step's alike lines (one layer, kind and shape) that number over %d "+
			"show as their first %d and a line that counts the rest (text only; not record's --full)", summaryLimit, trace.SummaryHead)
		from = "the server"
	}
	f.Var(&o.impl, "impl", "whose trace to print. Both always run and are compared at every step: client-go's queue "+
		"and listeners cannot be observed from outside, so the runner needs cachelab's settled state to know when "+
		"client-go has settled")
	f.Var(&o.stack, "stack", stackHelp)
	f.Var(outputFlag{&o.output, &o.htmlFile}, "output", "text for people, or json: one record per line (the header, every trace event with its typed "+
		"fields, each step's verdict, an error record if the run failed, and a summary record last; schema 2, see "+
		"sim/trace/SCHEMA.md), or html=FILE: the text trace on stdout, and the run as a timeline page written to FILE "+
		"(one self-contained file to open in any browser, offline), or mermaid: a sequence diagram of the run, written when it ends (cachelab's events and "+
		"client-go's verdict per step; kept under GitHub's size limits, aggregated if need be: see sim/trace/mermaid)")
	f.Var(&o.only, "only", "show only these layers, comma-separated (etcd, cache, sim, log, request, wire, watch, reflector, "+
		"transform, pop, indexer, handler or handler/<name>, synced, workqueue, reconcile, show, queue, note): text and mermaid")
	f.Var(&o.object, "object", "show only the events about one object, namespace/name (and those about no object "+
		"in particular: faults, requests, a relist that names it): text and mermaid; in text, the run ends with the object's "+
		"story, a sentence for each thing a step did to it, from "+from+" to the handlers and the reconcile")
	f.BoolVar(&o.full, "full", false, fullHelp)
	f.Var(&o.progress, "progress", "draw a progress line on stderr during long steps: auto (when stderr is a terminal), always, never")
	_ = f.MarkHidden("progress") // for tests, which have no terminal: see display.go
	f.Uint64Var(&o.seed, "seed", 1, "seeds cachelab's randomness (backoff jitter, watch timeouts)")
	f.BoolVar(&o.step, "step", false, "pause after each step until Enter ('q' and Enter stops); stdin must be a terminal")
	f.DurationVar(&o.settleTimeout, "settle-timeout", 10*time.Second, "how long a step may go without progress while it settles "+
		"(a new trace line or a relist backoff in progress is progress): longer for cachelab fails the run (exit 3), "+
		"longer for client-go is a divergence")
}

// check rejects flags that parse but do not make sense together.
func (m *Main) check(o *runOptions) error {
	switch {
	case o.step && o.output.value == "mermaid":
		return errors.New("--step pauses between steps, and --output mermaid writes the diagram when the run ends: use one of them")
	case o.output.value == "json" && (o.only.layers != nil || o.object.key != ""):
		return errors.New("--only and --object choose what text and mermaid show; --output json writes every event " +
			"(sim/trace/SCHEMA.md promises the world's whole, and a summary that counts what the stream holds): select records with a JSON tool, " +
			`such as jq 'select(.key == "ns0/a")'`)
	case o.step && !m.IsTerminal(m.Stdin):
		return errors.New("--step needs a terminal on stdin: it waits for Enter after each step")
	case o.settleTimeout <= 0:
		return fmt.Errorf("--settle-timeout %v: want a positive duration such as 10s", o.settleTimeout)
	case o.rewrite && o.stack.value != "":
		return errors.New("--rewrite writes the output of the scenario's own stack: drop --stack")
	case o.rewrite && o.detector.value != "":
		return errors.New("--rewrite writes the output of the scenario's own environment (its \"# Env:\" line): drop --consistency-detector")
	case o.rewrite && o.server.value != "":
		return errors.New("--rewrite writes the output of the scenario's own server (its \"# Server:\" line): drop --server")
	case o.members != 0 && o.members != 1 && o.members != 3 && o.members != 5:
		return fmt.Errorf("--etcd-members %d: want 1, 3 or 5", o.members)
	case o.members > 1 && len(o.etcd.Endpoints) > 0:
		return errors.New("--etcd-members starts an embedded etcd cluster, and --etcd-endpoints names an external etcd: use one of them")
	case o.rewrite && o.members != 0:
		return errors.New("--rewrite writes the output of the scenario's own etcd: drop --etcd-members")
	case o.rewrite && len(o.etcd.Endpoints) > 0:
		return errors.New("--rewrite writes the output of a fresh etcd (resourceVersions from 2): drop --etcd-endpoints")
	case o.onCluster() && o.server.value != "" && o.server.value != serverCluster:
		return fmt.Errorf("--kubeconfig and --context run on your cluster, and --server %s on a server in process: use one of them", o.server.value)
	case o.onCluster() && (len(o.etcd.Endpoints) > 0 || o.members != 0):
		return errors.New("a run on a cluster (--kubeconfig) uses the cluster's etcd, which it never touches: drop --etcd-endpoints and --etcd-members")
	case o.onCluster() && o.rewrite:
		return errors.New("--rewrite writes the output of the scenario's own in-process world; a cluster's resourceVersions and names are its own: drop --rewrite")
	}
	if o.replay {
		return nil // no etcd: its flags are not a replay's
	}
	return checkEtcd(o.etcd)
}

// run loads the scenario and steps it, printing each step as it completes,
// and notes in out what the JSON summary says. It drives a session itself
// rather than calling sim.Run, so that the header is printed before the
// first step and --step can pause between steps. However it ends, the
// session is closed before run returns: that stops etcd and removes the
// run's keys from an external one; then the embedded etcd's data
// directory is removed (datadir.go).
func (m *Main) run(ctx context.Context, name string, o *runOptions, p *printer, out *outcome) (err error) {
	if err := m.check(o); err != nil {
		return usage(err)
	}
	var sc *scenario.Scenario
	var rp *sim.Replay
	if o.replay {
		if sc, rp, err = loadReplay(ctx, name); err != nil {
			return loadFailed(ctx, err)
		}
		if rp.Session.Cut > 0 {
			m.errorf("%s:%d: the last line is cut short (as a recording stopped mid-line leaves it): it is left out, and the replay goes up to line %d\n",
				name, rp.Session.Cut, rp.Session.LineNo(len(rp.Session.Lines)-1))
		}
	} else {
		sc, err = sim.Load(name)
		err = nearScenario(name, err)
	}
	if err != nil {
		return usage(err)
	}
	out.scenario, out.total = sc.Name, len(sc.Steps)
	if o.rewrite && sc.Builtin {
		return usage(fmt.Errorf("--rewrite: %s is a built-in scenario; copy %s from cachelab's source and rewrite the copy", sc.Name, sc.File))
	}
	checked := sc
	if o.replay {
		checked = &scenario.Scenario{Name: sc.Name, File: name} // the file not to write over
	}
	if err := m.checkOutputs(checked, o); err != nil {
		return usage(err)
	}
	if err := checkPlant(o.plant); err != nil {
		return usage(err)
	}
	server, overWire := worldOf(o.server.value)
	opts := sim.Options{Stack: informer.Stack(o.stack.value), Server: server, Wire: overWire, Seed: o.seed, Plant: o.plant, ConsistencyDetector: o.detector.value,
		Etcd: o.etcd, SettleTimeout: o.settleTimeout, EtcdMembers: o.members, CompactExternalEtcd: o.compactEtcd,
		QuickClose: m.exiting, EtcdLogger: m.etcdLogger(), Replay: rp}
	if o.onCluster() {
		// Refused steps first: they need no cluster to be found.
		if err := sim.CheckCluster(sc); err != nil {
			return refused(err, sc)
		}
		server, opts.Server, opts.Wire = "", "", false
		if opts.Cluster, err = cluster.Open(ctx, cluster.Options{Kubeconfig: o.kubeconfig, Context: o.kubeContext}); err != nil {
			return clusterFailed(err)
		}
	}
	if err := sim.Check(sc, opts); err != nil {
		return refused(err, sc)
	}
	if opts.Cluster == nil && opts.Replay == nil {
		if opts.EtcdDir, err = m.makeDataDir(o); err != nil {
			return runError(err)
		}
	}
	defer m.dropDataDir() // after the session's Close, deferred below
	open := m.open
	if open == nil { // a Main not made by NewMain
		open = openSession
	}
	ses, err := open(ctx, sc, opts)
	if err != nil || ctx.Err() != nil {
		doing := "while starting etcd"
		switch {
		case opts.Cluster != nil:
			doing = "while making the run's namespace on the cluster"
		case opts.Replay != nil:
			doing = "while starting the replay"
		case len(o.etcd.Endpoints) > 0:
			doing = "while connecting to etcd"
		}
		return openFailed(ctx, ses, err, doing)
	}
	// The session is the running one until it is closed: a panic or a
	// second signal while it closes abandons it.
	m.setRunning(ses)
	defer m.setRunning(nil)
	defer func() {
		ses.Close()
		if left := ses.LeftBehind(); left != nil {
			m.errorf("%s: left behind: %v\n", sc.Name, left)
			if err == nil {
				err = runError(fmt.Errorf("after the run: %w", left))
			}
		}
	}()
	out.started = true
	defer func() { out.clock = ses.Clock() }() // before Close
	check := sc.HasExpectations() && !o.rewrite
	switch {
	case check && o.stack.value != "":
		check = false
		m.errorf("%s: expected output not checked: --stack %s replaces the stack it was written for\n", sc.Name, o.stack.value)
	case check && o.detector.value != "" && (o.detector.value == sim.DetectorOn) != sc.Detector:
		check = false
		m.errorf("%s: expected output not checked: --consistency-detector %s replaces the environment it was written for\n", sc.Name, o.detector.value)
	case check && server != "" && server != sc.WrittenFor():
		check = false
		m.errorf("%s: expected output not checked: it was written for --server %s\n", sc.Name, sc.WrittenFor())
	case check && o.members != 0 && o.members != sc.Members():
		check = false
		m.errorf("%s: expected output not checked: --etcd-members %d replaces the etcd it was written for\n", sc.Name, o.members)
	case check && opts.Cluster != nil:
		check = false
		m.errorf("%s: expected output not checked: on a cluster, resourceVersions and the namespace's name are the cluster's\n", sc.Name)
	case check && len(o.etcd.Endpoints) > 0:
		check = false
		m.errorf("%s: expected output not checked: it was written for a fresh etcd, and this one's resourceVersions are its own\n", sc.Name)
	}
	if err := p.header(ses.Header()); err != nil {
		return writeError(err, "before the first step")
	}
	ran, outputs, err := m.steps(ctx, ses, sc, o, check, p)
	out.ran = ran
	if err != nil {
		return err
	}
	if total := len(sc.Steps); ran < total {
		return writeError(p.summary(fmt.Sprintf("stopped after step %d of %d; client-go agreed at every step so far", ran, total)), "at the end")
	}
	if d := ses.Finish(); d != nil {
		if err := p.finish(d); err != nil {
			return writeError(err, "at the end")
		}
		return diverged(d)
	}
	// The timing goes to stderr after the summary's last line on stdout:
	// on a terminal, the two show in the order they are written (issue 29).
	took := m.Now().Sub(out.began).Round(time.Millisecond)
	defer fmt.Fprintf(m.Stderr, "%s: %d steps in %v\n", sc.Name, ran, took)
	summary := fmt.Sprintf("✓ %d steps, client-go agreed at every step", ran)
	switch {
	case o.rewrite:
		if err := sim.RewriteFile(sc, outputs); err != nil {
			return runError(fmt.Errorf("--rewrite: %w", err))
		}
		summary += "\n✓ what each step printed is written into " + sc.File
	case check:
		summary += "\n✓ every step printed what " + sc.File + " expects"
	case o.replay:
		summary += "\n" + replayVerdict(ses, rp)
	}
	return writeError(p.summary(summary), "at the end")
}

// openFailed is the error for a session that could not be opened, or
// was opened as a signal came (it is closed at once).
func openFailed(ctx context.Context, ses session, err error, doing string) error {
	switch {
	case ctx.Err() == nil:
		return runError(err)
	case err == nil:
		ses.Close()
	}
	return stopped(ctx, doing)
}

// steps carries out the scenario's steps in order and prints each one. It
// stops at the first divergence or failure (an error), at the first step
// that printed something other than the file expects (when check is set),
// when ctx is cancelled, or when the user stops it at a --step pause
// (o.step), and returns how many steps ran and, with --rewrite, what each
// printed. While a step runs, a progress line may show on stderr.
func (m *Main) steps(ctx context.Context, ses session, sc *scenario.Scenario, o *runOptions, check bool, p *printer) (int, []string, error) {
	pausing, keep := o.step, o.rewrite
	stdin := bufio.NewReader(m.Stdin)
	total := len(sc.Steps)
	var outputs []string
	for i, st := range sc.Steps {
		end := m.startProgress(o, ses, i+1, st.Cmd)
		sr, err := ses.Step(st)
		end()
		switch {
		case ctx.Err() != nil:
			return i, outputs, atStep(stopped(ctx, fmt.Sprintf("at step %d of %d (%s)", i+1, total, sc.Pos(st))), trace.FailInterrupted, i+1, sc, st)
		case err != nil:
			return i, outputs, atStep(runError(err), trace.FailRun, i+1, sc, st)
		}
		if err := p.step(sr); err != nil {
			return i, outputs, writeError(err, fmt.Sprintf("at step %d of %d", i+1, total))
		}
		if sr.Divergence != nil {
			return i + 1, outputs, diverged(sr.Divergence)
		}
		if check || keep {
			got := trace.StepOutput(sr)
			if keep {
				outputs = append(outputs, got)
			}
			if o.server.value == serverAPIServer {
				// Over the wire the story is the one in process, plus the
				// requests on the socket: those are left out of the check.
				got = trace.StepOutputWithout(sr, trace.LayerWire)
			}
			if check && got != st.Expected {
				return i + 1, outputs, m.unexpected(p, sc, st, i+1, got)
			}
		}
		if pausing && i+1 < total && !m.pause(ctx, stdin, i+2, total) {
			if ctx.Err() != nil {
				return i + 1, outputs, stopped(ctx, fmt.Sprintf("after step %d of %d", i+1, total))
			}
			return i + 1, outputs, nil
		}
	}
	return total, outputs, nil
}

// unexpected reports a step that printed something other than its
// expected block: the difference on stdout (text only) and a one-line
// summary, naming the block's first line, for stderr (exit 1).
func (m *Main) unexpected(p *printer, sc *scenario.Scenario, st scenario.Step, n int, got string) error {
	if p.text() {
		fmt.Fprintf(p.w, "\n✗ step %d printed something other than %s expects:\n", n, sc.Pos(st))
		d := diff.Diff("expected", []byte(st.Expected), "printed", []byte(got))
		for _, l := range strings.Split(strings.TrimSuffix(string(d), "\n"), "\n") {
			if !strings.HasPrefix(l, "diff ") { // the header names the two sides already
				fmt.Fprintf(p.w, "  %s\n", trace.Escape(l))
			}
		}
		if err := p.w.err; err != nil {
			return writeError(err, fmt.Sprintf("at step %d", n))
		}
	}
	return atStep(&exitError{code: exitDiverged, err: fmt.Errorf("✗ %s: step %d (%s) printed something other than the file expects after its \"----\"; "+
		"run with --rewrite to take what it printed", sc.Pos(st), n, st.Cmd)}, trace.FailUnexpected, n, sc, st)
}

// writeError is the error for a trace that could not be written: exit 141
// when the reader of stdout went away (EPIPE), as after `| head`; a run
// error otherwise (a full disk, say).
func writeError(err error, where string) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, syscall.EPIPE):
		return closedStdout(err, where)
	}
	return runError(fmt.Errorf("writing the trace %s: %w", where, err))
}

// diverged is the one-line summary of a divergence, for stderr: the trace
// on stdout already shows the difference.
func diverged(d *trace.Divergence) error {
	err := &exitError{code: exitDiverged, err: fmt.Errorf("✗ %s: step %d (%s): client-go differs from cachelab in layer %q", d.Pos, d.Step, d.Cmd, d.Layer)}
	return &stepFailure{at: trace.Failure{Kind: trace.FailDivergence, Step: d.Step, Pos: d.Pos, Cmd: d.Cmd, Layer: d.Layer}, err: err}
}

// color reports whether the text trace is coloured: only on a terminal,
// and never when NO_COLOR is set (https://no-color.org).
func (m *Main) color() bool {
	return m.IsTerminal(m.Stdout) && m.Getenv("NO_COLOR") == ""
}

// pause asks for Enter before step next of total, and reports whether to
// go on: not after "q", at the end of input, or once ctx is done. The read
// runs in its own goroutine so that Ctrl-C (which cancels ctx) is heard
// while it waits; a read still waiting then ends with the process.
func (m *Main) pause(ctx context.Context, stdin *bufio.Reader, next, total int) bool {
	fmt.Fprintf(m.Stderr, "── Enter: step %d of %d · q, Enter: stop ", next, total)
	answer := make(chan string, 1)
	go func() {
		line, err := stdin.ReadString('\n')
		if err != nil && line == "" {
			line = "q"
		}
		answer <- strings.TrimSpace(line)
	}()
	select {
	case a := <-answer:
		return a != "q"
	case <-ctx.Done():
		fmt.Fprintln(m.Stderr) // end the prompt's line: the error follows
		return false
	}
}

// serverAPIServer is --server's name for the watch-cache world over the
// wire (sim.Options.Wire).
const serverAPIServer = "apiserver"

// serverCluster is --server's name for the user's own cluster, through
// the kubeconfig kubectl reads (--kubeconfig and --context name one).
const serverCluster = "cluster"

// worldOf is the run's world and whether it is over the wire, for a
// --server value ("" keeps the scenario's).
func worldOf(server string) (string, bool) {
	if server == serverAPIServer {
		return scenario.ServerWatchCache, true
	}
	return server, false
}
