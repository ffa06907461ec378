package sim

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/cachelab/cachelab/informer"
	"github.com/cachelab/cachelab/internal/rvclaims"
	"github.com/cachelab/cachelab/sim/scenario"
	"github.com/cachelab/cachelab/sim/trace"
)

// Every resourceVersion a scenario's opening comment names is one its
// trace shows, and a request it says the reflector made at one (a relist,
// a re-watch, a LIST) is in the trace at that resourceVersion (issue 27,
// case 13: relist-after-compaction said its reflector "relists from rv
// \"\"" where the trace, as client-go, relisted at rv 3). The chapters
// quote these files as they are (notebooks/internal/cells), so this holds
// their quotes too. What a description says of the classic stack (a
// sentence or parenthesis naming it) is held against a run on that stack.
// A description can still tell a wrong story in words
// this cannot read: it catches a wrong number, not a wrong sentence.
func TestDescriptionsNameWhatTheTraceShows(t *testing.T) {
	t.Parallel()
	for _, file := range allScenarioFiles(t) {
		sc, err := Load(file)
		if err != nil {
			t.Fatal(err)
		}
		classic, rest := rvclaims.Split(prose(sc), "classic stack")
		for _, p := range rvclaims.Check(rest, expectedTrace(sc)) {
			t.Errorf("%s: its description says %s", file, p)
		}
		if len(rvclaims.Find(classic)) == 0 {
			continue
		}
		// What it says of the classic stack is held against a run on it
		// (a run of its own, beside the package's others, if the file
		// does not start that stack).
		check := func(t *testing.T, trace string) {
			for _, p := range rvclaims.Check(classic, trace) {
				t.Errorf("%s: its description says of the classic stack %s", file, p)
			}
		}
		if startsClassic(sc) {
			check(t, expectedTrace(sc))
			continue
		}
		t.Run(file, func(t *testing.T) {
			parallelIn(t, informer.Classic)
			check(t, classicTrace(t, sc))
		})
	}
}

// startsClassic reports whether sc starts the classic stack itself.
func startsClassic(sc *scenario.Scenario) bool {
	for _, st := range sc.Steps {
		for _, a := range st.Args {
			if (st.Cmd == "start" || st.Cmd == "start-queue") && a.Key == "stack" && slices.Equal(a.Vals, []string{"classic"}) {
				return true
			}
		}
	}
	return false
}

// classicTrace is what a run of the scenario prints on the classic stack.
func classicTrace(t *testing.T, sc *scenario.Scenario) string {
	t.Helper()
	res, err := Run(context.Background(), sc, Options{Seed: 1, Stack: informer.Classic})
	if err != nil {
		t.Fatalf("%s on the classic stack: %v", sc.File, err)
	}
	if res.Divergence != nil {
		t.Fatalf("%s on the classic stack: %v", sc.File, res.Divergence)
	}
	var b strings.Builder
	for _, sr := range res.Steps {
		b.WriteString(trace.StepOutput(sr))
	}
	return b.String()
}

// The check fails on the sentence issue 27 found, against the trace it
// stood over.
func TestDescriptionCheckCatchesTheRelistFromEmpty(t *testing.T) {
	sc, err := Load("scenarios/relist-after-compaction.txt")
	if err != nil {
		t.Fatal(err)
	}
	was := `Gone. The reflector forgets its resourceVersion, relists from rv "", and the cache catches up`
	if got := rvclaims.Check(was, expectedTrace(sc)); len(got) != 1 || !strings.Contains(got[0], `no list request after the first asks for rv=""`) {
		t.Errorf("the check of the old description found %q, want the relist from rv \"\" refused", got)
	}
}

// prose is a scenario's opening comment without its Covers and Server
// lines.
func prose(sc *scenario.Scenario) string {
	var keep []string
	for _, l := range strings.Split(sc.About, "\n") {
		if !strings.HasPrefix(l, "Covers:") && !strings.HasPrefix(l, "Server:") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// expectedTrace is what the scenario file expects its steps to print, one
// block after another.
func expectedTrace(sc *scenario.Scenario) string {
	var b strings.Builder
	for _, st := range sc.Steps {
		b.WriteString(st.Expected)
	}
	return b.String()
}
