package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"github.com/cachelab/cachelab/informer"
	"github.com/cachelab/cachelab/recording"
	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/sim/scenario"
)

func (m *Main) replayCommand() *cobra.Command {
	o := &runOptions{
		impl:     choice{value: "cachelab", allowed: []string{"cachelab", "client-go", "both"}},
		output:   choice{value: "text", allowed: []string{"text", "json", "html", "mermaid"}},
		stack:    choice{allowed: []string{string(informer.Default), string(informer.Classic)}},
		progress: choice{value: "auto", allowed: []string{"auto", "always", "never"}},
		replay:   true,
	}
	cmd := &cobra.Command{
		Use:   "replay <session.jsonl>",
		Short: "Replay a recorded session to cachelab and client-go, and print the trace",
		Long: `Replay plays a session 'cachelab record' wrote back to cachelab's informer
and to client-go's, side by side, as 'cachelab run' plays a scenario. Their
server is the recording: it answers every LIST and WATCH as the recorded
server did, and a watch's events come at the moments they reached the
recorded informer, on the run's own clock. A replay needs no cluster and
no etcd, and is the same on every run.

The replay is a scenario made from the session: a handler, the recorded
informer's start (its namespace and selectors), then one "advance" to each
moment the server had something new to say, and a "fail-next" before a
LIST or WATCH that failed; each step names the line of the session it
stands for (file:line), and so does every message about it. Each step
shows, as sim lines, what the session holds for it: the requests with their statuses and the recorded
informer's handler calls; at the end, the replay says whether cachelab's
replayed handler got the calls the recorded informer's got.

Where the session has a gap (the recorded informer listed again, after a
410 or a broken watch, and what came between never reached it), the
replay's server says so as a server would: the older watch ends with 410
Gone, and the informers list again.

` + replayExitHelp,
		Example: `  cachelab record -n default --for 10m > session.jsonl
  cachelab replay session.jsonl
  cachelab replay session.jsonl --impl both --output html=replay.html`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return errors.New("replay takes one session file, as 'cachelab record' writes it")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			out := &outcome{began: m.Now(), scenario: args[0]}
			style, err := m.textStyle(o)
			p := m.newPrinter(o, style)
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
	traceFlags(cmd.Flags(), o)
	return cmd
}

// replayExitHelp is the exit status paragraph of replay's help: a
// replay has no etcd, no cluster and no scenario file of its own.
const replayExitHelp = `A session may hold at most 32 MiB, 100,000 lines and 10,000 moments (a
replay's steps): a replay of that many takes about half a minute. A
longer recording is refused before anything runs; record a shorter span
(--for) or fewer pods (-n, -l).

Exit status: 0 when client-go agreed with cachelab at every step (the
line on the replayed handler at the end does not change it); 1 when it
differed; 2 for bad input, found before the replay starts (an unknown
flag, a session file that does not exist, is not a regular file, is too
large or is not a session, a line of it the format does not hold or that
contradicts the lines before it, named with its file:line, a session of
too many lines or steps, a start the replay cannot make, an output file
that cannot be written); 3 when the replay could not go on (cachelab did
not settle, an internal error). Stopped by a signal, while it reads the
session as at any step, it exits at once with 128 plus the signal's
number: 130 for SIGINT (Ctrl-C), 143 for SIGTERM, 129 for SIGHUP, and 141
when stdout is closed by its reader (as by 'head').`

// loadReplay reads a session file and makes its replay's scenario, and
// returns as soon as ctx ends, whatever it is doing: one line of a
// session can take a while to decode (a LIST of every pod, up to
// recording.MaxSize), and a signal must act at once. The reading stops
// by itself at its next line, in the background, and what it made is
// dropped.
func loadReplay(ctx context.Context, path string) (*scenario.Scenario, *sim.Replay, error) {
	type loaded struct {
		sc  *scenario.Scenario
		rp  *sim.Replay
		err error
	}
	done := make(chan loaded, 1)
	go func() {
		sc, rp, err := readReplay(ctx, path)
		done <- loaded{sc, rp, err}
	}()
	select {
	case l := <-done:
		return l.sc, l.rp, l.err
	case <-ctx.Done():
		return nil, nil, &recording.StoppedError{File: path, Err: context.Cause(ctx)}
	}
}

// readReplay is loadReplay's work. A file over recording.MaxSize is
// refused before it is read.
func readReplay(ctx context.Context, path string) (*scenario.Scenario, *sim.Replay, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("no such session file: %s", path)
	}
	if err != nil {
		return nil, nil, err
	}
	if kind := sim.FileKind(fi.Mode()); kind != "" {
		return nil, nil, fmt.Errorf("%s is %s: a session is a regular file ('cachelab record > %s')", path, kind, path)
	}
	if fi.Size() > recording.MaxSize {
		return nil, nil, fmt.Errorf("%s is %d bytes: a session may hold at most 32 MiB (%d bytes): %s", path, fi.Size(), recording.MaxSize, recording.TooMuch)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	s, err := recording.ReadContext(ctx, f, path)
	if err != nil {
		return nil, nil, err
	}
	rp, err := sim.NewReplay(s)
	if err != nil {
		return nil, nil, err
	}
	sc, err := rp.Scenario()
	if err != nil {
		return nil, nil, err
	}
	return sc, rp, nil
}

// loadFailed is the error for a session that could not be loaded: bad
// input, or a signal that came while it was read.
func loadFailed(ctx context.Context, err error) error {
	if se := (*recording.StoppedError)(nil); errors.As(err, &se) || ctx.Err() != nil {
		return stopped(ctx, "while reading the session")
	}
	return usage(err)
}

// replayVerdict says whether cachelab's replayed handler got the calls
// the recorded informer's did.
func replayVerdict(ses session, rp *sim.Replay) string {
	r, ok := ses.(interface{ ReplayDifference() string })
	if !ok {
		return ""
	}
	if !rp.HasCalls() {
		return "· the session holds no handler calls (it was not written by cachelab record): the replay is held to client-go only"
	}
	if d := r.ReplayDifference(); d != "" {
		return "✗ the replay differs from the recording: " + d
	}
	return "✓ cachelab's replayed handler got the calls the recorded informer's got, in order"
}
