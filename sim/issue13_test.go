package sim

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cachelab/cachelab/informer"
	"github.com/cachelab/cachelab/sim/scenario"
	"github.com/cachelab/cachelab/sim/trace"
	"github.com/cachelab/cachelab/sim/world"
	"github.com/cockroachdb/datadriven"
)

// runBoth parses src and runs it in both stacks, failing the test on a
// run error or a divergence.
func runBoth(t *testing.T, name, src string, opts Options) map[informer.Stack]*Result {
	t.Helper()
	sc, err := scenario.Parse(name+".txt", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	out := map[informer.Stack]*Result{}
	for _, stack := range []informer.Stack{informer.Default, informer.Classic} {
		out[stack] = runScenarioIn(t, stack, sc, opts)
	}
	return out
}

// runIn runs src in stack with opts, and fails t if the run fails or the
// sides diverge.
func runIn(t *testing.T, stack informer.Stack, name, src string, opts Options) *Result {
	t.Helper()
	sc, err := scenario.Parse(name+".txt", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return runScenarioIn(t, stack, sc, opts)
}

func runScenarioIn(t *testing.T, stack informer.Stack, sc *scenario.Scenario, opts Options) *Result {
	t.Helper()
	opts.Seed, opts.Stack = 1, stack
	res, err := Run(context.Background(), sc, opts)
	if err != nil {
		t.Fatalf("%s stack: %v", stack, err)
	}
	if res.Divergence != nil {
		t.Fatalf("%s stack: %v", stack, res.Divergence)
	}
	return res
}

// script writes commands as a scenario, each with an empty expected output.
func script(cmds ...string) string {
	var b strings.Builder
	b.WriteString("# A sequence from issue 13.\n\n")
	for _, c := range cmds {
		fmt.Fprintf(&b, "%s\n----\n\n", c)
	}
	return b.String()
}

// unchecked is the scenario script(cmds...) writes, built step by step
// as a program driving a Session may build one: each step well-formed on
// its own (scenario.ParseArgs), without the replay with which
// scenario.Parse refuses steps out of place.
func unchecked(t *testing.T, file string, cmds ...string) *scenario.Scenario {
	t.Helper()
	title := "A sequence from issue 13."
	sc := &scenario.Scenario{File: file, Name: strings.TrimSuffix(file, ".txt"), Title: title, About: title}
	for i, c := range cmds {
		cmd, args, err := datadriven.ParseLine(c)
		if err != nil {
			t.Fatal(err)
		}
		st := scenario.Step{Line: 3 + 3*i, Cmd: cmd, Args: args, Text: c}
		if _, err := scenario.ParseArgs(st); err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		sc.Steps = append(sc.Steps, st)
	}
	return sc
}

// Documented commands never crash the run, in any order: the sequences
// that panicked (stop clearing the config the invariant check reads;
// levers pulled before start, with no informer yet).
func TestCommandsInAnyOrder(t *testing.T) {
	t.Parallel()
	sequences := map[string][]string{
		"stop after start":        {"add-handler h1", "create ns0/a", "start", "stop"},
		"start again after stop":  {"add-handler h1", "create ns0/a", "start", "stop", "add-handler h2", "create ns0/b", "start", "show store"},
		"levers before start":     {"disconnect", "reconnect", "fail-next list=500 watch=500", "close-watch", "create ns0/a", "start"},
		"held before start":       {"create ns0/a", "disconnect", "start", "show requests", "reconnect", "show store"},
		"progress before start":   {"progress", "create ns0/a", "start", "progress"},
		"progress disconnected":   {"create ns0/a", "start", "disconnect", "progress", "reconnect", "create ns0/b"},
		"compact twice":           {"create ns0/a", "start", "compact", "compact", "create ns0/b", "compact"},
		"stop before start":       {"stop", "create ns0/a", "start", "stop", "stop"},
		"release and remove late": {"create ns0/a ns0/b", "start", "add-handler h slow", "remove-handler h", "create ns0/c"},
	}
	// One stack's runs, then the other's (parallelIn).
	for _, stack := range []informer.Stack{informer.Default, informer.Classic} {
		for name, cmds := range sequences {
			t.Run(name+"/"+string(stack), func(t *testing.T) {
				parallelIn(t, stack)
				runIn(t, stack, name, script(cmds...), Options{})
			})
		}
	}
}

// A handler added to a stopped informer is refused by both, and the trace
// says so; the run goes on.
func TestAddHandlerAfterStopIsATraceLine(t *testing.T) {
	res := runBoth(t, "refused", script("create ns0/a", "start", "stop", "add-handler late"), Options{})
	for stack, r := range res {
		last := r.Steps[len(r.Steps)-1]
		for _, impl := range []string{trace.Cachelab, trace.ClientGo} {
			if got := last.Sides[impl]; len(got) != 1 || !strings.Contains(got[0].Text(), "has stopped already") {
				t.Errorf("%s stack, %s: add-handler after stop printed %v, want the refusal", stack, impl, got)
			}
		}
	}
}

// A relist backoff grows past the settle timeout (0.8-1.6 s, then
// 1.6-3.2 s with a 1 s timeout): both sides agree, and settling counts
// the wait as progress instead of failing the run.
func TestRelistBackoffIsProgress(t *testing.T) {
	sc, err := Load("watch-errors")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), sc, Options{Seed: 1, SettleTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res.Divergence != nil {
		t.Fatal(res.Divergence)
	}
}

// A settle failure's message is short whatever the step did: the last
// lines of the trace, each clipped, and what the side waited for.
func TestSettleMessageIsBounded(t *testing.T) {
	rec := &trace.Recorder{}
	for i := range 100000 {
		rec.Add(trace.LayerTransform, trace.KindEnqueue, "", fmt.Sprintf("ns/obj-%06d %s", i, strings.Repeat("x", 500)))
	}
	got := rec.Peek(20)
	if n := strings.Count(got, "\n"); n != 21 || len(got) > 21*150 {
		t.Errorf("peek(20) of 100000 long lines: %d lines, %d bytes", n, len(got))
	}
	if !strings.Contains(got, "99980 earlier lines") {
		t.Errorf("peek does not say what it left out:\n%s", got[:200])
	}
	why := waitingFor("etcd", "3", 5, world.State{Listing: true}, informer.Backlog{Queued: 2, Handlers: map[string]int{"h1": 1}})
	for _, want := range []string{`reach etcd's rv 5 (it is at "3")`, "a watch to be open", "Replace", "2 queued deltas", "handler h1"} {
		if !strings.Contains(why, want) {
			t.Errorf("waitingFor = %q, want it to mention %q", why, want)
		}
	}
	if d := clipLines(strings.Repeat("line\n", 1000), 40); strings.Count(d, "\n") != 40 || !strings.HasSuffix(d, "961 more lines") {
		t.Errorf("clipLines kept %d lines: ...%s", strings.Count(d, "\n"), d[len(d)-30:])
	}
}

// Parse refuses steps that cannot run where they stand (package
// scenario, dryrun.go). The runner must still refuse them cleanly, with
// an error naming the step, never a panic or a hang: a Session is also
// driven step by step by programs that build their own Steps.
func TestStepsParseRefusesFailCleanly(t *testing.T) {
	for name, cmds := range map[string][]string{
		"remove unknown handler": {"start", "remove-handler nope"},
		"release unknown":        {"release nope"},
		"update missing object":  {"start", "update ns0/x image=v2"},
		"delete missing object":  {"delete ns0/x"},
		"create twice":           {"create ns0/a", "create ns0/a"},
		"resync without period":  {"start", "resync"},
		"pause an informer":      {"start", "pause"},
		"start twice":            {"start", "start"},
		"handler on a queue":     {"start-queue", "add-handler h"},
	} {
		t.Run(name, func(t *testing.T) {
			src := script(cmds...)
			if _, err := scenario.Parse("refused.txt", []byte(src)); err == nil {
				t.Fatalf("Parse accepted it; this test is for steps Parse refuses")
			}
			sc := unchecked(t, "refused.txt", cmds...)
			for _, stack := range []informer.Stack{informer.Default, informer.Classic} {
				_, err := Run(context.Background(), sc, Options{Seed: 1, Stack: stack})
				t.Logf("%s stack: %v", stack, err)
				if err == nil || !strings.HasPrefix(err.Error(), "refused.txt:") {
					t.Errorf("%s stack: got %v, want an error naming refused.txt:<line>", stack, err)
				}
			}
		})
	}
}
