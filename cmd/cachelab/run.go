package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cachelab/cachelab/informer"
	"github.com/cachelab/cachelab/listwatch"
	"github.com/cachelab/cachelab/sim"
)

// runOptions are the flags of `cachelab run`.
type runOptions struct {
	impl          choice // whose trace to print
	output        choice // text or json
	stack         choice // "" keeps the scenario's own
	seed          uint64
	step          bool
	etcd          listwatch.ClientOptions
	settleTimeout time.Duration
}

func (m *Main) runCommand() *cobra.Command {
	o := &runOptions{
		impl:   choice{value: "cachelab", allowed: []string{"cachelab", "client-go", "both"}},
		output: choice{value: "text", allowed: []string{"text", "json"}},
		stack:  choice{allowed: []string{string(informer.Default), string(informer.Classic)}},
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

Exit status: 0 when client-go agreed with cachelab at every step; 1 when it
differed, or when a step could not be carried out (the message names the
step's file:line); 2 for bad input: an unknown scenario, a missing or
malformed scenario file, a bad flag.`,
		Example: `  cachelab run add-update-delete
  cachelab run relist-after-compaction --impl both --stack classic
  cachelab run ./my-scenario.txt --output json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return m.run(cmd.Context(), args[0], o)
		},
	}
	f := cmd.Flags()
	f.Var(&o.impl, "impl", "whose trace to print. Both always run and are compared at every step: client-go's queue "+
		"and listeners cannot be observed from outside, so the runner needs cachelab's settled state to know when "+
		"client-go has settled")
	f.Var(&o.stack, "stack", "the informer stack, instead of the scenario's own (start stack=...): default "+
		"(RealFIFO, watch-list) or classic (DeltaFIFO, LIST then WATCH)")
	f.Var(&o.output, "output", "text for people, or json: one record per line (the header, every trace line, "+
		"each step's verdict)")
	f.Uint64Var(&o.seed, "seed", 1, "seeds cachelab's randomness (backoff jitter, watch timeouts)")
	f.BoolVar(&o.step, "step", false, "pause after each step until Enter ('q' and Enter stops); stdin must be a terminal")
	f.StringSliceVar(&o.etcd.Endpoints, "etcd-endpoints", nil, "an external etcd's client URLs, comma-separated "+
		"(https:// for TLS); the run keeps to its own key prefix and removes it at the end. Unset: an embedded etcd")
	f.StringVar(&o.etcd.TLS.CAFile, "etcd-cacert", "", "CA certificate file for --etcd-endpoints")
	f.StringVar(&o.etcd.TLS.CertFile, "etcd-cert", "", "client certificate file for --etcd-endpoints")
	f.StringVar(&o.etcd.TLS.KeyFile, "etcd-key", "", "client key file for --etcd-endpoints")
	f.DurationVar(&o.settleTimeout, "settle-timeout", 10*time.Second, "how long a step may take to settle: "+
		"longer for cachelab fails the run, longer for client-go is a divergence")
	return cmd
}

// check rejects flags that parse but do not make sense together.
func (m *Main) check(o *runOptions) error {
	switch {
	case o.step && !m.IsTerminal(m.Stdin):
		return errors.New("--step needs a terminal on stdin: it waits for Enter after each step")
	case o.settleTimeout <= 0:
		return fmt.Errorf("--settle-timeout %v: want a positive duration such as 10s", o.settleTimeout)
	case len(o.etcd.Endpoints) == 0 && o.etcd.TLS != (listwatch.TLSFiles{}):
		return errors.New("--etcd-cacert, --etcd-cert and --etcd-key need --etcd-endpoints (the embedded etcd has no TLS)")
	}
	return nil
}

// run loads the scenario and steps it, printing each step as it completes.
// It drives a sim.Session itself rather than calling sim.Run, so that the
// header is printed before the first step and --step can pause between
// steps.
func (m *Main) run(ctx context.Context, name string, o *runOptions) error {
	if err := m.check(o); err != nil {
		return usage(err)
	}
	sc, err := sim.Load(name)
	if err != nil {
		return usage(err)
	}
	began := m.Now()
	ses, err := sim.Open(ctx, sc, sim.Options{Stack: informer.Stack(o.stack.value), Seed: o.seed,
		Etcd: o.etcd, SettleTimeout: o.settleTimeout})
	if err != nil {
		return failed(err)
	}
	defer ses.Close()
	p := &printer{w: &errWriter{w: m.Stdout}, json: o.output.value == "json",
		style: sim.TextStyle{Color: m.color(), Impl: o.impl.value}}
	if err := p.header(ses.Header()); err != nil {
		return failed(err)
	}
	ran, err := m.steps(ctx, ses, sc, o.step, p)
	if err != nil {
		return err
	}
	if total := len(sc.Steps); ran < total {
		return p.summary(fmt.Sprintf("stopped after step %d of %d; client-go agreed at every step so far", ran, total))
	}
	if d := ses.Finish(); d != nil {
		fmt.Fprintf(m.Stdout, "%s\n", d.Error())
		return diverged(d)
	}
	fmt.Fprintf(m.Stderr, "%s: %d steps in %v\n", sc.Name, ran, m.Now().Sub(began).Round(time.Millisecond))
	return p.summary(fmt.Sprintf("✓ %d steps, client-go agreed at every step", ran))
}

// steps carries out the scenario's steps in order and prints each one. It
// stops at the first divergence or failure (an error), or when the user
// stops it at a --step pause, and returns how many steps ran.
func (m *Main) steps(ctx context.Context, ses *sim.Session, sc *sim.Scenario, pausing bool, p *printer) (int, error) {
	stdin := bufio.NewReader(m.Stdin)
	total := len(sc.Steps)
	for i, st := range sc.Steps {
		sr, err := ses.Step(st)
		if ctx.Err() != nil {
			return i, failed(fmt.Errorf("interrupted at step %d of %d (%s)", i+1, total, sc.Pos(st)))
		}
		if err != nil {
			return i, failed(err)
		}
		if err := p.step(sr); err != nil {
			return i, failed(err)
		}
		if sr.Divergence != nil {
			return i + 1, diverged(sr.Divergence)
		}
		if pausing && i+1 < total && !m.pause(ctx, stdin, i+2, total) {
			if ctx.Err() != nil {
				return i + 1, failed(fmt.Errorf("interrupted after step %d of %d", i+1, total))
			}
			return i + 1, nil
		}
	}
	return total, nil
}

// diverged is the one-line summary of a divergence, for stderr: the trace
// on stdout already shows the difference.
func diverged(d *sim.Divergence) error {
	return failed(fmt.Errorf("✗ %s: step %d (%s): client-go differs from cachelab in layer %q", d.Pos, d.Step, d.Cmd, d.Layer))
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
		return false
	}
}

// printer writes a run's trace as it happens: text for people, or JSON
// lines (a header record, then each step's lines and verdict).
type printer struct {
	w     *errWriter
	json  bool
	style sim.TextStyle
}

func (p *printer) header(h sim.Header) error {
	if p.json {
		return sim.WriteJSONHeader(p.w, h)
	}
	sim.WriteHeader(p.w, h)
	return p.w.err
}

func (p *printer) step(sr sim.StepResult) error {
	if p.json {
		return sim.WriteJSONStep(p.w, sr, p.style.Impl)
	}
	sim.WriteStep(p.w, sr, p.style)
	return p.w.err
}

// summary ends a text trace with a line saying how the run went. JSON
// output has no summary record: every step record carries its verdict.
func (p *printer) summary(line string) error {
	if p.json {
		return nil
	}
	fmt.Fprintf(p.w, "\n%s\n", line)
	return p.w.err
}

// errWriter keeps the first write error: sim's text writers do not return
// one, and a run whose output cannot be written should stop.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(b []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(b)
	e.err = err
	return n, err
}
