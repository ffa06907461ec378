package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/goleak"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	"github.com/cachelab/cachelab/internal/loopback"
	"github.com/cachelab/cachelab/internal/schemacheck"
	"github.com/cachelab/cachelab/internal/testcerts"
	"github.com/cachelab/cachelab/internal/testdeadline"
	"github.com/cachelab/cachelab/internal/testparallel"
	"github.com/cachelab/cachelab/listwatch"
	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/sim/explore"
	"github.com/cachelab/cachelab/sim/scenario"
	"github.com/cachelab/cachelab/sim/trace"
)

// TestMain makes this test binary the cachelab command too: testscript
// copies it into each script's PATH as "cachelab", and when it runs under
// that name it runs main. Each `exec cachelab` is therefore its own
// process, with its own etcd and its own client-go feature gates (which
// are global), so the scripts run in parallel.
//
// cachelab-diverging is cachelab whose run reports that client-go
// differed at the first update step, or, with DIVERGE_AT=finish, in the
// late calls after the last step: the built-in scenarios all agree, and a
// script needs a divergence to see what the CLI does with one.
func TestMain(m *testing.M) {
	testscript.Main(leakChecked{m}, map[string]func(){
		"cachelab":           main,
		"cachelab-diverging": mainDiverging,
		"cachelab-panicking": mainPanicking,
		"cachelab-slowclose": mainSlowClose,
		"cachelab-exploring": mainExploring,
	})
}

// cachelab-slowclose is cachelab whose session's Close says so on stderr
// and never returns: a clean-up that hangs, which a second signal must
// cut short without leaving the run's data behind. Its explore hangs as
// well: each placement's run stops for good after its second step, its
// etcd running ("test: holding a run"), so that a signal finds etcds
// that never stop.
func mainSlowClose() {
	m := NewMain()
	wrapSessions(m, func(s session) session { return slowClose{session: s} })
	run := m.exploreRun
	m.exploreRun = func(ctx context.Context, sc *scenario.Scenario, o explore.Options) (*explore.Exploration, error) {
		var runs atomic.Int32 // the runs that reached their second step: the first is the run without faults
		o.Run.OnStep = func(sr trace.StepResult) bool {
			if sr.Index == 2 && runs.Add(1) > 1 {
				fmt.Fprintln(os.Stderr, "test: holding a run")
				select {}
			}
			return true
		}
		context.AfterFunc(ctx, func() { fmt.Fprintln(os.Stderr, "test: closing, and never done") })
		return run(ctx, sc, o)
	}
	os.Exit(runProcess(m, os.Args[1:]))
}

// cachelab-exploring is cachelab whose explore says on stderr when each
// placement's run has ended ("test: placement N of M run"): something a
// script can wait for before it stops an exploration in the middle,
// which prints nothing until its end.
func mainExploring() {
	m := NewMain()
	run := m.exploreRun
	m.exploreRun = func(ctx context.Context, sc *scenario.Scenario, o explore.Options) (*explore.Exploration, error) {
		onRun := o.OnRun
		o.OnRun = func(done, total int) {
			onRun(done, total)
			fmt.Fprintf(os.Stderr, "test: placement %d of %d run\n", done, total)
		}
		return run(ctx, sc, o)
	}
	os.Exit(runProcess(m, os.Args[1:]))
}

type slowClose struct{ session }

func (slowClose) Close() {
	fmt.Fprintln(os.Stderr, "test: closing, and never done")
	select {}
}

// cachelab-panicking is cachelab whose first update step panics on
// another goroutine, the way a handler's or a reflector's panic reaches
// utilruntime.HandleCrash in an informer, and never returns.
func mainPanicking() {
	m := NewMain()
	wrapSessions(m, func(s session) session { return &panicking{session: s} })
	os.Exit(runProcess(m, os.Args[1:]))
}

// wrapSessions makes m's runs use wrap's session around the one it opens.
func wrapSessions(m *Main, wrap func(session) session) {
	open := m.open
	m.open = func(ctx context.Context, sc *scenario.Scenario, opts sim.Options) (session, error) {
		s, err := open(ctx, sc, opts)
		if err != nil {
			return nil, err
		}
		return wrap(s), nil
	}
}

type panicking struct{ session }

func (p *panicking) Step(st scenario.Step) (trace.StepResult, error) {
	if st.Cmd != "update" {
		return p.session.Step(st)
	}
	go func() {
		defer utilruntime.HandleCrash()
		panic("a handler's bug")
	}()
	select {} // the panic handler ends the process
}

func mainDiverging() {
	m := NewMain()
	at := os.Getenv("DIVERGE_AT")
	if at == "" {
		at = "update"
	}
	wrapSessions(m, func(s session) session { return &diverging{session: s, at: at} })
	os.Exit(runProcess(m, os.Args[1:]))
}

// diverging is a session whose first step of command at reports a
// divergence, as the simulator reports a real one.
type diverging struct {
	session
	at   string
	done bool
}

func (d *diverging) Step(st scenario.Step) (trace.StepResult, error) {
	sr, err := d.session.Step(st)
	if err == nil && st.Cmd == d.at && !d.done {
		d.done = true
		sr.Divergence = &trace.Divergence{Step: sr.Index, Pos: sr.Pos, Cmd: sr.Cmd, Layer: "handler/h1",
			Diff: "  []string{\n- \t\"OnUpdate ns0/a\",\n+ \t\"OnAdd ns0/a\",\n  }\n"}
	}
	return sr, err
}

func (d *diverging) Finish() *trace.Divergence {
	if f := d.session.Finish(); f != nil || d.at != "finish" {
		return f
	}
	return &trace.Divergence{Step: 7, Pos: "sim/scenarios/add-update-delete.txt", Cmd: "(after the last step)", Layer: "late calls",
		Diff: "  []string{\n+ \t\"handler/h1 OnUpdate ns0/a@2 -> ns0/a@4\",\n  }\n"}
}

// leakChecked is goleak.VerifyTestMain's check with testscript.Main
// around it: after the tests pass, no goroutine may be left running by
// the in-process runs.
type leakChecked struct{ m *testing.M }

func (l leakChecked) Run() int {
	// A script mostly waits on the cachelab it started (on its etcd, on
	// its scenario settling): four overlap, on any number of cores.
	places.free = testparallel.Gated(4) // places_test.go
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
	t.Parallel() // beside the longest in-process tests (places_test.go)
	// The scripts' waits end at the test binary's deadline; the scripts
	// are subtests, so the context outlives every one of them.
	deadline := testdeadline.Context(t)
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Setup:               func(env *testscript.Env) error { return setupProcs(env, deadline) },
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits":       cmdExits,
			"bigsession":  cmdBigSession,
			"jsonlines":   cmdJSONLines,
			"explorejson": cmdExploreJSON,
			"mermaid":     cmdMermaid,
			"etcd":        cmdEtcd,
			"cluster":     cmdCluster,
			"namespaces":  cmdNamespaces,
			"etcdkeys":    cmdEtcdkeys,
			"certs":       cmdCerts,
			"freeport":    cmdFreeport,
			"mute":        cmdMute,
			"emptydir":    cmdEmptydir,
			"mode":        cmdMode,
			// process_test.go
			"start":       cmdStart,
			"waitfor":     cmdWaitfor,
			"signal":      cmdSignal,
			"closestdout": cmdClosestdout,
			"enter":       cmdEnter,
			"waitdialed":  cmdWaitdialed,
			"exitcode":    cmdExitcode,
		},
	})
}

// cmdEtcd starts an etcd over TLS for the rest of the script, as an
// external cluster would be: its endpoint and certificate files go in
// $ETCD_ENDPOINT, $ETCD_CACERT, $ETCD_CERT and $ETCD_KEY, and its
// host:port in $ETCD_ADDR.
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
	ts.Setenv("ETCD_ADDR", strings.TrimPrefix(e.Endpoints()[0], "https://"))
	ts.Setenv("ETCD_CACERT", tls.CAFile)
	ts.Setenv("ETCD_CERT", tls.CertFile)
	ts.Setenv("ETCD_KEY", tls.KeyFile)
}

// cmdCerts writes another CA and certificate into a directory: to the
// etcd the script started, a CA it does not know.
//
//	certs other
func cmdCerts(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: certs <dir>")
	}
	dir := ts.MkAbs(args[0])
	ts.Check(os.MkdirAll(dir, 0o755))
	testcerts.Write(scriptTB{ts}, dir)
}

// cmdFreeport sets a variable to a loopback address nothing listens on:
// a port the kernel handed out and that was closed at once.
//
//	freeport REFUSED
func cmdFreeport(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: freeport <variable>")
	}
	ts.Setenv(args[0], loopback.Refused(scriptTB{ts}))
}

// cmdMute sets a variable to a loopback address that accepts connections
// and never answers, for the rest of the script: an etcd that hangs.
// waitdialed waits for its first connection.
//
//	mute SILENT
func cmdMute(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: mute <variable>")
	}
	addr, dialed := loopback.Mute(scriptTB{ts})
	slotOf(ts).dialed = dialed
	ts.Setenv(args[0], addr)
}

// cmdEmptydir checks that a directory is empty, naming what it holds if
// not.
//
//	emptydir $TMPDIR
func cmdEmptydir(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: emptydir <dir>")
	}
	entries, err := os.ReadDir(ts.MkAbs(args[0]))
	ts.Check(err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) > 0 {
		ts.Fatalf("%s is not empty: %s", args[0], strings.Join(names, " "))
	}
}

// cmdMode checks a file's permission bits, in octal.
//
//	mode private.txt 0600
func cmdMode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: mode <file> <octal mode>")
	}
	fi, err := os.Stat(ts.MkAbs(args[0]))
	ts.Check(err)
	if got := fmt.Sprintf("%04o", fi.Mode().Perm()); got != args[1] {
		ts.Fatalf("%s has mode %s, want %s", args[0], got, args[1])
	}
}

// cmdEtcdkeys prints the keys under a prefix in the script's etcd (see
// etcd), one a line.
//
//	etcdkeys /registry/
func cmdEtcdkeys(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: etcdkeys <prefix>")
	}
	ctx := slotOf(ts).deadline
	c, err := listwatch.Connect(ctx, listwatch.ClientOptions{Endpoints: []string{ts.Getenv("ETCD_ENDPOINT")},
		TLS: listwatch.TLSFiles{CAFile: ts.Getenv("ETCD_CACERT"), CertFile: ts.Getenv("ETCD_CERT"), KeyFile: ts.Getenv("ETCD_KEY")}})
	ts.Check(err)
	defer c.Close()
	resp, err := c.Get(ctx, args[0], clientv3.WithPrefix(), clientv3.WithKeysOnly())
	ts.Check(err)
	out := ts.Stdout() // none printed is an empty stdout, not the last command's
	for _, kv := range resp.Kvs {
		fmt.Fprintln(out, string(kv.Key))
	}
}

// scriptTB lets testcerts and loopback report to a script.
type scriptTB struct {
	*testscript.TestScript
}

func (s scriptTB) Helper()           {}
func (s scriptTB) Fatal(args ...any) { s.TestScript.Fatalf("%s", fmt.Sprint(args...)) }
func (s scriptTB) Cleanup(f func())  { s.TestScript.Defer(f) }

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

// cmdExploreJSON checks the last command's stdout as explore --output
// json: one record that validates against explore.Schema.
//
//	explorejson
func cmdExploreJSON(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) > 0 {
		ts.Fatalf("usage: explorejson")
	}
	if err := schemacheck.Document(explore.Schema, []byte(ts.ReadFile("stdout"))); err != nil {
		ts.Fatalf("stdout is not an explore record as sim/explore/schema.json says: %v", err)
	}
}

// cmdJSONLines checks the last command's stdout as --output json: every
// line a record that validates against sim/trace's schema, in the order
// SCHEMA.md promises, ending with the summary (internal/schemacheck).
//
//	jsonlines
func cmdJSONLines(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) > 0 {
		ts.Fatalf("usage: jsonlines")
	}
	if err := schemacheck.Stream([]byte(ts.ReadFile("stdout"))); err != nil {
		ts.Fatalf("stdout is not --output json as sim/trace/SCHEMA.md says: %v", err)
	}
}
