package main

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/sim/trace"
)

// These tests run the CLI in the test process, one run at a time
// (client-go's feature gates are global): what the scripts cannot reach,
// and what needs many runs. The longest run beside the scripts, one at a
// time still (inProcess, places_test.go).

// cli is a Main wired to buffers, with a terminal and an environment the
// test chooses.
type cli struct {
	*Main
	stdout, stderr strings.Builder
}

func newCLI(stdin string, terminal bool, env map[string]string) *cli {
	c := &cli{Main: NewMain()}
	c.Stdin, c.Stdout, c.Stderr = strings.NewReader(stdin), &c.stdout, &c.stderr
	c.Getenv = func(k string) string { return env[k] }
	c.IsTerminal = func(any) bool { return terminal }
	c.Now = func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }
	// explore's -j auto as on 2 CPUs (CI's), so that the timing line it
	// prints is the same on every machine.
	c.cpusUsable = func() int { return 2 }
	return c
}

func (c *cli) run(t *testing.T, wantCode int, args ...string) {
	t.Helper()
	if code := c.Run(context.Background(), args); code != wantCode {
		t.Fatalf("cachelab %s: exit code %d, want %d; stdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, wantCode, c.stdout.String(), c.stderr.String())
	}
}

// The same scenario, flags and seed print the same bytes, run after run:
// traces hold logical time and revisions, never wall-clock time, and
// map-ordered lines are sorted (STYLE 6).
func TestRunIsDeterministic(t *testing.T) {
	inProcess(t) // beside the scripts (places_test.go)
	runs := 20
	if testing.Short() {
		runs = 3
	}
	// Both stacks, one after the other in one process: the header's
	// feature gates must follow the stack, not the previous run.
	for _, args := range [][]string{
		{"run", "add-update-delete", "--impl", "both"},
		{"run", "add-update-delete", "--impl", "both", "--stack", "classic"},
	} {
		t.Run(strings.Join(args[1:], " "), func(t *testing.T) {
			var first string
			for i := range runs {
				c := newCLI("", false, nil)
				c.run(t, exitOK, args...)
				if i == 0 {
					first = c.stdout.String()
				} else if got := c.stdout.String(); got != first {
					t.Fatalf("run %d's trace differs from run 1's (-run 1 +run %d):\n%s", i+1, i+1, cmp.Diff(first, got))
				}
			}
		})
	}
}

// Every built-in scenario is listed, one a line, name first.
func TestScenariosListsTheCatalog(t *testing.T) {
	cat, err := sim.Catalog()
	if err != nil {
		t.Fatal(err)
	}
	c := newCLI("", false, nil)
	c.run(t, exitOK, "scenarios")
	lines := strings.Split(strings.TrimSuffix(c.stdout.String(), "\n"), "\n")
	if got, want := len(lines), len(cat)+1; got != want {
		t.Fatalf("got %d lines, want a header and one per scenario (%d):\n%s", got, want, c.stdout.String())
	}
	for i, sc := range cat {
		if got := strings.Fields(lines[i+1])[0]; got != sc.Name {
			t.Errorf("line %d names %q, want %q", i+2, got, sc.Name)
		}
	}
}

// --step on a terminal: Enter runs the next step, q stops, and what ran is
// summed up. (testdata/script/step.txtar does the same on a real pty.)
func TestStepPausesUntilEnter(t *testing.T) {
	c := newCLI("\n\nq\n", true, map[string]string{"NO_COLOR": "1"})
	c.run(t, exitOK, "run", "add-update-delete", "--step")
	out := c.stdout.String()
	if !strings.Contains(out, "── step 3: start") || strings.Contains(out, "── step 4") {
		t.Errorf("want steps 1 to 3 and no more, got:\n%s", out)
	}
	if want := "\nstopped after step 3 of "; !strings.Contains(out, want) {
		t.Errorf("stdout does not say %q:\n%s", want, out)
	}
	if got, want := strings.Count(c.stderr.String(), "── Enter: step "), 3; got != want {
		t.Errorf("got %d prompts, want %d; stderr:\n%s", got, want, c.stderr.String())
	}
}

// Colour only on a terminal, and never with NO_COLOR set.
func TestColor(t *testing.T) {
	for _, tc := range []struct {
		terminal bool
		noColor  string
		want     bool
	}{
		{terminal: true, want: true},
		{terminal: true, noColor: "1", want: false},
		{terminal: false, want: false},
	} {
		c := newCLI("", tc.terminal, map[string]string{"NO_COLOR": tc.noColor})
		if got := c.color(); got != tc.want {
			t.Errorf("terminal=%t NO_COLOR=%q: color() = %t, want %t", tc.terminal, tc.noColor, got, tc.want)
		}
	}
}

// A divergence exits 1 with a line naming the step's file:line and the
// layer. (The built-in scenarios all agree, so this calls the step that
// reports it directly.)
func TestDivergedNamesStepAndLayer(t *testing.T) {
	err := diverged(&trace.Divergence{Step: 3, Pos: "x.txt:12", Cmd: "update ns0/a", Layer: "indexer", Diff: "-a\n+b\n"})
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != exitDiverged {
		t.Fatalf("diverged() = %v, want an exitError with code %d", err, exitDiverged)
	}
	if got, want := err.Error(), `✗ x.txt:12: step 3 (update ns0/a): client-go differs from cachelab in layer "indexer"`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// On a terminal stdout and stderr are one screen: the run's timing line
// (stderr) comes after the summary's last line (stdout), not in the
// middle of the ✓ lines (issue 29). One writer stands for the screen.
func TestTimingLineComesLast(t *testing.T) {
	c := newCLI("", true, nil)
	var screen strings.Builder
	c.Stdout, c.Stderr = &screen, &screen
	c.run(t, 0, "run", "add-update-delete")
	lines := strings.Split(strings.TrimRight(screen.String(), "\n"), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "add-update-delete: 6 steps in ") {
		t.Fatalf("the screen ends with %q, want the timing line after the summary; the end of the screen:\n%s", last, strings.Join(lines[max(0, len(lines)-4):], "\n"))
	}
	if prev := lines[len(lines)-3]; !strings.Contains(prev, "✓ 6 steps, client-go agreed at every step") {
		t.Fatalf("two lines before the timing is %q, want the summary's first line", prev)
	}
}

// An error on a narrow terminal breaks between words, never in one, and
// keeps every word (issue 29).
func TestErrorFitsTheTerminal(t *testing.T) {
	c := newCLI("", true, map[string]string{envTermWidth: "40"})
	c.run(t, exitUsage, "run", "relist-after-compactoin")
	got := c.stderr.String()
	if !strings.Contains(got, "relist-after-compaction") {
		t.Fatalf("the error does not suggest the scenario:\n%s", got)
	}
	for _, l := range strings.Split(strings.TrimRight(got, "\n"), "\n") {
		if n := utf8.RuneCountInString(l); n > 40 && strings.Contains(strings.TrimSpace(l), " ") {
			t.Errorf("a line of %d columns, over the terminal's 40, that could have broken at a space: %q", n, l)
		}
	}
	whole := newCLI("", false, nil)
	whole.run(t, exitUsage, "run", "relist-after-compactoin")
	if a, b := strings.Fields(got), strings.Fields(whole.stderr.String()); !slices.Equal(a, b) {
		t.Errorf("wrapping changed the words:\n%q\nunwrapped:\n%q", a, b)
	}
}
