package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cachelab/cachelab/informer"
	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/sim/explore"
	"github.com/cachelab/cachelab/sim/scenario"
)

// exploreOptions are explore's flags.
type exploreOptions struct {
	output    choice
	shard     string
	faults    string
	maxFaults int
	between   bool
	plant     string
	jobs      jobsFlag
	sample    int
	sampleSed uint64
	seed      uint64
	out       string
	stack     choice
	server    choice
	serve     bool // a controller in another process (serve.go)
	unowned   []string
}

func (m *Main) exploreCommand() *cobra.Command {
	o := &exploreOptions{
		output: choice{value: "text", allowed: []string{"text", "json"}},
		stack:  choice{allowed: []string{string(informer.Default), string(informer.Classic)}},
		server: choice{allowed: []string{scenario.ServerWatchCache, scenario.ServerEtcd}},
	}
	var kinds []string
	for _, k := range scenario.FaultKinds {
		w := ""
		if k.World() != "" {
			w = " (" + k.World() + " only)"
		}
		kinds = append(kinds, fmt.Sprintf("  %-18s %s%s", k.Name, k.About, w))
	}
	cmd := &cobra.Command{
		Use:   "explore <scenario name or file>",
		Short: "Run a scenario once per placement of a fault, and group what happened into stories",
		Long: `Explore runs a scenario (built-in or a file) once without faults, then once per
placement of a fault: each fault of --faults put in each gap between two
steps (before the first, after the last), disconnect and close-watch also
inside a step whose watch hands an informer several events (after the
first, the middle one and the last but one: after-events=N), disconnect
also between the pages of a paged LIST (after-pages=N), and a fault that
needs healing healed at each later gap or at the end. Each placement is
a whole run of both informers, cachelab's and client-go's, compared at
every step as 'cachelab run' compares them, with the invariants checked
after each step.

The outcomes are grouped by what the handlers and controllers saw, against
the run without faults: "a delete arrives as a tombstone", "an update is
never delivered (the relist jumps over it)", "nothing visible to the
handlers: the informer relisted", and so on. A divergence from client-go or
a broken invariant is a group of its own, printed first, with its file: the
shortest placement of the group as a scenario, cut after the step that
tells its story, with each step's expected output, ready for 'cachelab run'.
Every step the report names is numbered as the scenario numbers its
steps, a fault or heal explore put in named by the step it went before;
a group's file numbers its own, its faults among them.
--out DIR writes every group's file there, with its timeline page (as
'run --output html' draws it, titled by the group's story, with where
the faults went and the scenario's run without faults to compare) and
index.html, the report as a page that links to them; every page opens
offline.

--output json writes the exploration as one JSON record: each placement's
outcome, its story and its file (its JSON Schema, every field explained:
sim/explore/schema.json). --shard i/n runs a deterministic share of
the placements (those whose index is i modulo n, 0 <= i < n) and writes its
record as JSON; 'cachelab explore merge' reads every shard's record and
prints the report the exploration unsharded prints, byte for byte. Run the
shards anywhere: as the indexes of a Kubernetes Indexed Job, or a CI
matrix (docs/exploring.md).

The report is deterministic: the same command prints the same bytes on every
run, with any -j. How long it took, and at what -j, goes to stderr.

Faults:
` + strings.Join(kinds, "\n") + `

` + plantHelp() + `

` + exploreExitHelp,
		Args: func(cmd *cobra.Command, args []string) error {
			if o.serve {
				return nil // exploreServe says what is missing
			}
			return cobra.ExactArgs(1)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.serve {
				return m.exploreServe(cmd, args, o)
			}
			return m.explore(cmd, args[0], o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.faults, "faults", strings.Join(scenario.DefaultFaults, ","), "the faults to place, comma-separated")
	f.IntVar(&o.maxFaults, "max-faults", 1, "faults per placement, 1 or 2")
	f.BoolVar(&o.between, "between-steps", false, "place faults only between steps, none inside a step")
	f.VarP(&o.jobs, "jobs", "j", "placements run at once, or auto: 2 per CPU computing, and while some wait out client-go's relist "+
		"backoff (real time), others in their place, up to 8 per CPU in the etcd world and 4 behind the watch cache (where "+
		"each run's settling dumps every goroutine of the process), at most 16")
	f.IntVar(&o.sample, "sample", 0, "run a seeded random choice of this many placements instead of all")
	f.Uint64Var(&o.sampleSed, "sample-seed", 1, "the seed of --sample's choice")
	f.Uint64Var(&o.seed, "seed", 1, "each run's seed (cachelab's backoff jitter)")
	f.StringVar(&o.plant, "plant", "", "plant a known bug in cachelab's side of every run, to see what explore finds: "+plantNames())
	f.StringVar(&o.out, "out", "", "a directory to write each group's scenario file to (made if missing; it must be empty)")
	f.Var(&o.output, "output", "the report: "+o.output.Type())
	f.StringVar(&o.shard, "shard", "", "run shard i of n (i/n, 0-based) of the placements and write its record as JSON, for explore merge")
	f.Var(&o.stack, "stack", "the informers' stack: "+o.stack.Type()+" (default: the scenario's)")
	f.Var(&o.server, "server", "the world: "+o.server.Type()+" (default: the scenario's)")
	f.BoolVar(&o.serve, "serve", false, "explore a story with your controller in another process: explore --serve STORY -- COMMAND [ARG...] "+
		"runs COMMAND once per placement, against a fresh world, with KUBECONFIG set (see 'cachelab serve')")
	f.StringSliceVar(&o.unowned, "unowned", nil, "with --serve: "+unownedUsage)
	cmd.AddCommand(m.exploreMergeCommand())
	return cmd
}

func (m *Main) exploreMergeCommand() *cobra.Command {
	var output choice = choice{value: "text", allowed: []string{"text", "json"}}
	var out string
	cmd := &cobra.Command{
		Use:   "merge <shard record>...",
		Short: "Merge the records of an exploration's shards into its report",
		Long: `Merge reads the JSON records that 'cachelab explore --shard i/n' wrote, one
per shard, checks they are every shard of one exploration, and prints the
report the exploration unsharded prints, byte for byte (--output json: its
record). --out DIR writes each group's scenario file, as explore does.

` + exploreExitHelp,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out != "" {
				if err := emptyDir(out); err != nil {
					return usage(err)
				}
			}
			var recs []explore.Record
			for _, a := range args {
				b, err := os.ReadFile(a)
				if err != nil {
					return usage(err)
				}
				var rec explore.Record
				if err := json.Unmarshal(b, &rec); err != nil {
					return usage(fmt.Errorf("%s: not an exploration's record: %v", a, err))
				}
				recs = append(recs, rec)
			}
			rec, err := explore.Merge(recs)
			if err != nil {
				return usage(err)
			}
			var runs sim.Options
			if out != "" { // each group's timeline is a run
				if runs, err = m.runsOptions(); err != nil {
					return err
				}
				defer m.dropDataDir()
			}
			return m.report(cmd.Context(), rec, out, output.value, runs)
		},
	}
	cmd.Flags().Var(&output, "output", "the report: "+output.Type())
	cmd.Flags().StringVar(&out, "out", "", "a directory to write each group's scenario file to (made if missing; it must be empty)")
	return cmd
}

func (m *Main) explore(cmd *cobra.Command, name string, o *exploreOptions) error {
	sc, err := sim.Load(name)
	if err != nil {
		return usage(nearScenario(name, err))
	}
	most, computing := m.jobs(o, sc)
	shard, shards, err := o.parseShard()
	if err != nil {
		return usage(err)
	}
	if o.out != "" {
		if err := emptyDir(o.out); err != nil {
			return usage(err)
		}
	}
	if err := checkPlant(o.plant); err != nil {
		return usage(err)
	}
	var faults []string
	for _, f := range strings.Split(o.faults, ",") {
		if f = strings.TrimSpace(f); f != "" {
			faults = append(faults, f)
		}
	}
	runs, err := m.runsOptions()
	if err != nil {
		return err
	}
	defer m.dropDataDir() // after every run has closed: explore.Run and report wait for them
	runs.Stack, runs.Server, runs.Seed, runs.Plant = informer.Stack(o.stack.value), o.server.value, o.seed, o.plant
	ctx := cmd.Context()
	// How far it got, for a signal's message: the runs that ended before
	// the signal, of all. OnRun is called under explore's lock, and they
	// are read once Run has returned.
	var ran, total int
	onRun := func(done, of int) {
		if total = of; ctx.Err() == nil {
			ran = done
		}
	}
	opts := explore.Options{Faults: faults, MaxFaults: o.maxFaults, BetweenSteps: o.between, Jobs: most, Computing: computing, Sample: o.sample, SampleSeed: o.sampleSed, Shard: shard, Shards: shards,
		Run: runs, OnRun: onRun}
	began := m.Now()
	exploreRun := m.exploreRun
	if exploreRun == nil { // a Main not made by NewMain
		exploreRun = explore.Run
	}
	ex, err := exploreRun(ctx, sc, opts)
	if err != nil {
		return exploreFailed(ctx, err, sc.Name, ran, total)
	}
	fmt.Fprintf(m.Stderr, "%s: %d placements run in %v at %s\n", sc.Name, ex.Run, m.Now().Sub(began).Round(1e6), o.jobs.said(most, computing))
	rec := ex.Record()
	if shards > 1 {
		return m.writeRecord(rec)
	}
	return m.report(ctx, rec, o.out, o.output.value, runs)
}

// parseShard reads --shard i/n: 0, 0 without it.
func (o *exploreOptions) parseShard() (shard, shards int, err error) {
	if o.shard == "" {
		return 0, 0, nil
	}
	if _, err := fmt.Sscanf(o.shard, "%d/%d", &shard, &shards); err != nil || shards < 1 || shard < 0 || shard >= shards ||
		fmt.Sprintf("%d/%d", shard, shards) != o.shard {
		return 0, 0, fmt.Errorf("--shard %s: want i/n, with 0 <= i < n, such as 0/4", o.shard)
	}
	if shards == 1 {
		return 0, 0, fmt.Errorf("--shard %s: one shard is the whole exploration; leave --shard out", o.shard)
	}
	if o.out != "" {
		return 0, 0, errors.New("--out with --shard: a shard writes its record only; give --out to explore merge, which writes the groups' files")
	}
	return shard, shards, nil
}

// writeRecord writes an exploration's record as JSON.
func (m *Main) writeRecord(rec explore.Record) error {
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return runError(err)
	}
	_, err = fmt.Fprintf(m.Stdout, "%s\n", b)
	return writeError(err, "while writing the exploration's record")
}

// report prints an exploration's report (or its record, as JSON), and
// writes each group's file, its timeline (a run of the file, from runs)
// and the report page (index.html) into dir if one is given. It exits 1
// when a group is a divergence or a broken invariant.
func (m *Main) report(ctx context.Context, rec explore.Record, dir, output string, runs sim.Options) error {
	groups := rec.Groups()
	files, err := writeGroupFiles(rec, groups, dir)
	if err != nil {
		return runError(err)
	}
	if dir != "" {
		if err := writeGroupPages(ctx, rec, groups, files, dir, runs); err != nil {
			if signalled(ctx) {
				return stopped(ctx, "while writing the groups' timelines into "+dir)
			}
			return runError(err)
		}
	}
	bad := false
	for _, g := range groups {
		bad = bad || g.Divergence || g.Broken
	}
	if output == "json" {
		if err := m.writeRecord(rec); err != nil {
			return err
		}
	} else {
		w := &errWriter{w: m.Stdout}
		rec.WriteReport(w, files)
		if err := writeError(w.err, "while writing the report"); err != nil {
			return err
		}
	}
	if bad {
		return &exitError{code: exitDiverged, err: fmt.Errorf("✗ %s: a placement diverged from client-go or broke an invariant (above)", rec.Scenario)}
	}
	return nil
}

// emptyDir makes dir if it is missing, and refuses one that holds
// anything: explore never writes over a file of the user's.
func emptyDir(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return os.MkdirAll(dir, 0o755)
	case err != nil:
		return fmt.Errorf("--out %s: %w", dir, err)
	case len(entries) > 0:
		return fmt.Errorf("--out %s: the directory is not empty; explore writes only into an empty or new one", dir)
	}
	return nil
}

var slugRE = regexp.MustCompile(`[^a-z0-9]+`)

// writeGroupFiles writes each group's minimal file into dir (if set), and
// returns the name each group's file has there, by group.
func writeGroupFiles(rec explore.Record, groups []explore.RecordGroup, dir string) (map[int]string, error) {
	names := map[int]string{}
	if dir == "" {
		return names, nil
	}
	for i, g := range groups {
		slug := strings.Trim(slugRE.ReplaceAllString(strings.ToLower(g.Label), "-"), "-")
		if len(slug) > 60 {
			slug = strings.TrimRight(slug[:60], "-")
		}
		name := filepath.Join(dir, fmt.Sprintf("%s-%02d-%s.txt", rec.Scenario, i+1, slug))
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return nil, err
		}
		_, err = io.WriteString(f, g.Outcomes[0].Minimal)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, err
		}
		names[i] = name
	}
	return names, nil
}

// plantHelp is the help's list of the known bugs --plant takes, each
// with what it does.
func plantHelp() string {
	lines := []string{"Planted bugs (--plant), each in cachelab's side only, for the comparison with client-go to find:"}
	for _, p := range sim.Plants {
		lines = append(lines, fmt.Sprintf("  %-24s %s", p.Name, p.About))
	}
	return strings.Join(lines, "\n")
}

// plantNames lists the known bugs --plant takes.
func plantNames() string {
	var names []string
	for _, p := range sim.Plants {
		names = append(names, p.Name)
	}
	return strings.Join(names, ", ")
}

// checkPlant refuses a --plant that names no known bug.
func checkPlant(name string) error {
	if name == "" {
		return nil
	}
	_, err := sim.LookupPlant(name)
	if err != nil {
		return fmt.Errorf("--plant: %w", err)
	}
	return nil
}
