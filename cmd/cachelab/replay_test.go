package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/cachelab/cachelab/recording"
	"github.com/cachelab/cachelab/sim"
)

// A session is a cluster's data: its names, labels and server messages
// reach the terminal only escaped. testdata/sessions/control-chars.jsonl
// holds a pod whose name clears the screen and sets the window title, a
// name with a newline and a forged trace line after it, a C1 CSI, and an
// ERROR whose message sets the title; each of run's outputs (text, one
// implementation or both, an object's story, mermaid, json) shows them
// with no control byte but newlines on stdout or stderr, and JSON keeps
// them, valid and whole.
func TestReplayEscapesWhatItShows(t *testing.T) {
	inProcess(t) // beside the scripts (places_test.go)
	const session = "testdata/sessions/control-chars.jsonl"
	for _, args := range [][]string{{}, {"--impl", "both"}, {"--object", "ns0/a\x1b[2J\x1b]0;pwned\a"}, {"--output", "mermaid"}, {"--output", "json"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			c := newCLI("", false, nil)
			c.run(t, exitOK, append([]string{"replay", session}, args...)...)
			for name, out := range map[string]string{"stdout": c.stdout.String(), "stderr": c.stderr.String()} {
				if i := strings.IndexFunc(out, func(r rune) bool { return r != '\n' && unsafeForTerminal(r) }); i >= 0 {
					t.Errorf("%s holds %q at byte %d: ...%q...", name, out[i:i+1], i, out[max(i-40, 0):min(i+40, len(out))])
				}
			}
			if len(args) > 0 && args[len(args)-1] == "json" {
				named := false
				for _, l := range strings.Split(strings.TrimSuffix(c.stdout.String(), "\n"), "\n") {
					if !json.Valid([]byte(l)) {
						t.Fatalf("not a JSON record: %s", l)
					}
					named = named || bytes.Contains([]byte(l), []byte(`"key":"ns0/a\u001b[2J\u001b]0;pwned\u0007"`))
				}
				if !named {
					t.Errorf("no JSON record names the pod as its session does:\n%s", c.stdout.String())
				}
			}
		})
	}
}

// unsafeForTerminal reports whether a terminal would act on r: a C0 or
// C1 control, DEL, or a bidirectional control (trace.Escape's set,
// written out again here so that the test does not take it on trust).
func unsafeForTerminal(r rune) bool {
	return r < 0x20 || r >= 0x7f && r <= 0x9f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 || r == 0x200e || r == 0x200f || r == 0x061c
}

// A signal while a replay reads its session acts at once: the replay
// exits 130 before it starts, and says what it was doing. The signal
// comes (tripwire) the 1,000th time the run asks whether its context has
// ended, which reading does before each line: in the middle of a session
// of 50,000 lines. Before reading stopped for signals, this replay ran to
// its end.
func TestReplayStopsWhileItReads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "long.jsonl")
	text := `{"kind":"session","at":"0s","version":1,"resource":"pods"}` + "\n" +
		`{"kind":"list","at":"10ms","listRV":"100"}` + "\n" + strings.Repeat(`{"kind":"request","at":"10ms","method":"GET","uri":"/api/v1/pods","try":1,"status":200}`+"\n", 49_998)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	tw := &tripwire{Context: ctx, cancel: func() { cancel(interrupted{sig: syscall.SIGINT}) }}
	tw.left.Store(1000)
	c := newCLI("", false, nil)
	if got := c.Run(tw, []string{"replay", path}); got != 130 {
		t.Fatalf("exit code %d, want 130; stderr:\n%s", got, c.stderr.String())
	}
	if want := "cachelab: interrupted by SIGINT while reading the session\n"; c.stderr.String() != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", c.stderr.String(), want)
	}
	if c.stdout.Len() > 0 {
		t.Errorf("the replay started; stdout:\n%s", c.stdout.String())
	}
	if left := tw.left.Load(); left > 0 {
		t.Errorf("the signal never came: the run asked %d times whether it had", 1000-left)
	}
}

// tripwire is a context that a signal cancels the left-th time anything
// asks it whether it has ended (Err): a signal that comes while a run is
// in the middle of work that asks, as reading a session does.
type tripwire struct {
	context.Context
	cancel func()
	left   atomic.Int64
}

func (t *tripwire) Err() error {
	if t.left.Add(-1) == 0 {
		t.cancel()
	}
	return t.Context.Err()
}

// What a session may hold is said before the replay starts: a file over
// recording.MaxSize before it is read, and a session of more than
// sim.MaxReplaySteps moments at the line of the first beyond them.
func TestReplayLimits(t *testing.T) {
	inProcess(t) // beside the scripts (places_test.go)
	dir := t.TempDir()
	big := filepath.Join(dir, "big.jsonl")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, recording.MaxSize+1); err != nil {
		t.Fatal(err)
	}
	c := newCLI("", false, nil)
	c.run(t, exitUsage, "replay", big)
	if want := "cachelab: " + big + " is 33554433 bytes: a session may hold at most 32 MiB (33554432 bytes): record a shorter span (--for) or fewer pods (-n, -l)\n"; c.stderr.String() != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", c.stderr.String(), want)
	}

	var b strings.Builder
	b.WriteString(`{"kind":"session","at":"0s","version":1,"resource":"pods"}` + "\n")
	b.WriteString(`{"kind":"list","at":"0s","listRV":"100"}` + "\n" + `{"kind":"watch","at":"0s","watch":1,"resourceVersion":"100"}` + "\n")
	for i := range sim.MaxReplaySteps {
		fmt.Fprintf(&b, `{"kind":"event","at":"%dms","watch":1,"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"%d"}}}`+"\n", i+1, 101+i)
	}
	long := filepath.Join(dir, "long.jsonl")
	if err := os.WriteFile(long, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	c = newCLI("", false, nil)
	c.run(t, exitUsage, "replay", long)
	// Steps 1 and 2 are the handler and the start, step 3 the first
	// bookmark's moment (line 4): the first step beyond is line 10,002's.
	if want := "cachelab: " + long + ":10002: the replay passes 10000 steps here (a step for each moment the recorded server said something new), " +
		"the most a replay takes: record a shorter span (--for) or fewer pods (-n, -l)\n"; c.stderr.String() != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", c.stderr.String(), want)
	}
}
