package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"go.uber.org/goleak"

	"github.com/cachelab/cachelab/internal/testcerts"
	"github.com/cachelab/cachelab/listwatch"
)

// TestMain makes this test binary the cachelab command too: testscript
// copies it into each script's PATH as "cachelab", and when it runs under
// that name it runs main. Each `exec cachelab` is therefore its own
// process, with its own etcd and its own client-go feature gates (which
// are global), so the scripts run in parallel.
func TestMain(m *testing.M) {
	testscript.Main(leakChecked{m}, map[string]func(){"cachelab": main})
}

// leakChecked is goleak.VerifyTestMain's check with testscript.Main
// around it: after the tests pass, no goroutine may be left running by
// the in-process runs.
type leakChecked struct{ m *testing.M }

func (l leakChecked) Run() int {
	if code := l.m.Run(); code != 0 {
		return code
	}
	if err := goleak.Find(); err != nil {
		fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
		return 1
	}
	return 0
}

// TestCLI runs the scripts in testdata/script: each is a txtar archive of
// commands and the files they use (scenario files, terminal input).
func TestCLI(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits":     cmdExits,
			"jsonlines": cmdJSONLines,
			"etcd":      cmdEtcd,
		},
	})
}

// cmdEtcd starts an etcd over TLS for the rest of the script, as an
// external cluster would be: its endpoint and certificate files go in
// $ETCD_ENDPOINT, $ETCD_CACERT, $ETCD_CERT and $ETCD_KEY.
//
//	etcd
func cmdEtcd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) > 0 {
		ts.Fatalf("usage: etcd")
	}
	dir := ts.MkAbs("etcd")
	tls := testcerts.Write(scriptTB{ts}, ts.MkAbs("."))
	e, err := listwatch.StartEmbedded(context.Background(), listwatch.EmbeddedOptions{Dir: dir, TLS: tls})
	if err != nil {
		ts.Fatalf("etcd: %v", err)
	}
	ts.Defer(func() { _ = e.Close() })
	ts.Setenv("ETCD_ENDPOINT", e.Endpoints()[0])
	ts.Setenv("ETCD_CACERT", tls.CAFile)
	ts.Setenv("ETCD_CERT", tls.CertFile)
	ts.Setenv("ETCD_KEY", tls.KeyFile)
}

// scriptTB lets testcerts report to a script.
type scriptTB struct {
	*testscript.TestScript
}

func (s scriptTB) Helper()           {}
func (s scriptTB) Fatal(args ...any) { s.TestScript.Fatalf("%s", fmt.Sprint(args...)) }

// cmdExits runs a command as exec does and checks its exit code, which
// exec cannot: `! exec` only says that the command failed.
//
//	exits 2 cachelab run missing.txt
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits <code> <command> [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: code %q: %v", args[0], err)
	}
	got := 0
	var ee *exec.ExitError
	switch err := ts.Exec(args[1], args[2:]...); {
	case errors.As(err, &ee):
		got = ee.ExitCode()
	case err != nil:
		ts.Fatalf("exits: %v", err)
	}
	if got != want {
		ts.Fatalf("%s exited with %d, want %d", args[1], got, want)
	}
}

// cmdJSONLines checks that every line of the last command's stdout is a
// JSON object.
//
//	jsonlines
func cmdJSONLines(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) > 0 {
		ts.Fatalf("usage: jsonlines")
	}
	out := ts.ReadFile("stdout")
	if out == "" {
		ts.Fatalf("jsonlines: stdout is empty")
	}
	for i, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			ts.Fatalf("stdout line %d is not a JSON object (%v): %s", i+1, err, line)
		}
	}
}
