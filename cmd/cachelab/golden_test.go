package main

import (
	"flag"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cachelab/cachelab/internal/golden"
	"github.com/cachelab/cachelab/internal/schemacheck"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*.jsonl with what the runs write")

// wallTime is the one field of --output json that differs from run to
// run (sim/trace/SCHEMA.md): golden files hold it as 0.
var wallTime = regexp.MustCompile(`"wallTimeMs":\d+`)

// The whole --output json stream of a few small runs, byte for byte: one
// that agrees, the same diverging, and a file that does not parse. The
// scenarios are files of this package's own, so that editing a built-in
// walkthrough does not touch them. Refresh with:
// go test ./cmd/cachelab -run TestJSONGolden -update
func TestJSONGolden(t *testing.T) {
	for _, tc := range []struct {
		golden   string
		wrap     func(*Main)
		wantCode int
		args     []string
	}{
		{golden: "agree", wantCode: exitOK, args: []string{"run", "testdata/golden/agree.txt", "--impl", "both"}},
		{golden: "diverged", wantCode: exitDiverged, args: []string{"run", "testdata/golden/agree.txt"},
			wrap: func(m *Main) {
				wrapSessions(m, func(s session) session { return &diverging{session: s, at: "update"} })
			}},
		{golden: "parse-error", wantCode: exitUsage, args: []string{"run", "testdata/golden/parse-error.txt"}},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			c := newCLI("", false, nil)
			if tc.wrap != nil {
				tc.wrap(c.Main)
			}
			c.run(t, tc.wantCode, append(tc.args, "--output", "json")...)
			got := c.stdout.String()
			if err := schemacheck.Stream([]byte(got)); err != nil {
				t.Fatal(err)
			}
			got = wallTime.ReplaceAllString(got, `"wallTimeMs":0`)
			golden.Check(t, filepath.Join("testdata", "golden", tc.golden+".jsonl"), got, *update, "--output json")
		})
	}
}

// A run the user stops at a --step pause exits 0 and says so in its
// summary: "stopped", with the steps that ran.
func TestJSONStoppedAtAPause(t *testing.T) {
	c := newCLI("\nq\n", true, nil)
	c.run(t, exitOK, "run", "testdata/golden/agree.txt", "--step", "--output", "json")
	out := c.stdout.String()
	if err := schemacheck.Stream([]byte(out)); err != nil {
		t.Fatal(err)
	}
	if want := `"verdict":"stopped","exit":0,"stepsRun":2,"stepsTotal":6,`; !strings.Contains(out, want) {
		t.Errorf("the summary does not say %s:\n%s", want, out)
	}
}
