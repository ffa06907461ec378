package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
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
