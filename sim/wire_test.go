package sim

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cachelab/cachelab/informer"
	"github.com/cachelab/cachelab/internal/golden"
	"github.com/cachelab/cachelab/sim/scenario"
	"github.com/cachelab/cachelab/sim/trace"
)

// Over the wire (--server apiserver) every built-in and regression
// scenario written for the watch cache (those that hold the cache, switch
// kube-apiservers or cut the connections among them) runs with both
// informers reaching kube-apiserver over HTTPS, each through its own
// implementation's HTTP client, in both stacks. Two things are checked at every step: cachelab and
// client-go agree, the wire lines (each try of each request, H1-H7)
// included; and the story is the one the scenario tells in process: its
// expected output (or its trace in the other stack,
// testdata/traces/other-stack), once the wire lines are taken out, is what it
// printed. The wire adds requests on a socket, not a different world.
//
// Where it is a different world, the run's whole trace, wire lines and
// all, is held to testdata/traces/over-the-wire instead, and
// storyOverTheWire says why.
func TestScenariosOverTheWire(t *testing.T) {
	// Beside the other parallel tests once the serial ones have run
	// (parallel_test.go): its runs take their places among -parallel's.
	t.Parallel()
	for _, file := range allScenarioFiles(t) {
		sc, err := Load(file)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(file)
		if sc.WrittenFor() != scenario.ServerWatchCache {
			continue // the etcd world's: refused over the wire, with the reason
		}
		t.Run(name, func(t *testing.T) { runOverTheWire(t, sc, Options{}, "") })
		t.Run(name+"/other-stack", func(t *testing.T) { runOverTheWire(t, sc, Options{Stack: otherStack(sc)}, "other-stack") })
	}
}

// storyOverTheWire names the scenarios whose story over HTTP is not the
// one they tell in process, and why.
var storyOverTheWire = map[string]string{
	// In the classic stack the 504 "Too large resource version" that
	// ends a consistent read's wait in a cache behind etcd carries
	// Retry-After: 1, so over HTTP both REST clients try the LIST again
	// (H4), where in process the reflector gets the 504.
	"watch-cache-etcd-restore/other-stack": "a 504 with Retry-After is tried again by the REST clients (H4)",
	// A LIST waiting in a held cache when the connections are cut: in
	// process the call is in the server and stays there; over HTTP its
	// connection is reset, and both REST clients try it again (a GET
	// whose connection was reset, a second later), and the try waits in
	// the proxy until reconnect.
	"held-cache-disconnect":             "a LIST waiting in the cache is reset by the cut, and tried again after reconnect",
	"held-cache-disconnect/other-stack": "a watch-list waiting in the cache is reset by the cut, and asked again after reconnect",
}

func otherStack(sc *scenario.Scenario) informer.Stack {
	if stackOf(sc) == informer.Classic {
		return informer.Default
	}
	return informer.Classic
}

// runOverTheWire runs sc over the wire with opts and holds its trace
// without wire lines to what it prints in process: the file's expected
// output, or (other) its trace in testdata/traces/<other>. A scenario
// whose story differs over HTTP (storyOverTheWire) is held, wire lines
// and all, to testdata/traces/over-the-wire.
func runOverTheWire(t *testing.T, sc *scenario.Scenario, opts Options, other string) {
	parallelIn(t, runsStack(sc, opts))
	opts.Seed, opts.Wire = 1, true
	res, err := Run(context.Background(), sc, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Divergence != nil {
		t.Fatal(res.Divergence)
	}
	key := sc.Name
	if other != "" {
		key += "/" + other
	}
	var b strings.Builder
	wireLines := 0
	for _, sr := range res.Steps {
		for _, e := range sr.Sides[trace.Cachelab] {
			if e.Layer == trace.LayerWire {
				wireLines++
			}
		}
		if _, differs := storyOverTheWire[key]; differs {
			fmt.Fprintf(&b, "%s\n----\n%s\n", sr.Cmd, trace.StepOutput(sr))
		} else {
			fmt.Fprintf(&b, "%s\n----\n%s\n", sr.Cmd, trace.StepOutputWithout(sr, trace.LayerWire))
		}
	}
	if wireLines == 0 && startsAnInformer(sc) {
		t.Errorf("no wire line in a run whose informer started")
	}
	switch why, differs := storyOverTheWire[key]; {
	case differs:
		file := filepath.Join("testdata", "traces", "over-the-wire", strings.ReplaceAll(key, "/", ".")+".txt")
		golden.Check(t, file, b.String(), rewriting(), "the trace over the wire ("+why+")")
	case other != "":
		golden.Check(t, filepath.Join("testdata", "traces", other, sc.Name+".txt"), b.String(), false,
			"the "+other+"'s trace over the wire, without its wire lines")
	default:
		if d := cmp.Diff(expectedBlocks(sc), b.String()); d != "" {
			t.Errorf("over the wire, without its wire lines, the trace differs from the file's (-file +over the wire):\n%s", d)
		}
	}
}

// expectedBlocks is the file's expected output as checkTrace writes a
// trace: each step's command, "----" and its output.
func expectedBlocks(sc *scenario.Scenario) string {
	var b strings.Builder
	for _, st := range sc.Steps {
		fmt.Fprintf(&b, "%s\n----\n%s\n", st.Text, st.Expected)
	}
	return b.String()
}

// rewriting reports whether the test runs with -rewrite.
func rewriting() bool {
	f := flag.Lookup("rewrite")
	return f != nil && f.Value.String() == "true"
}

func startsAnInformer(sc *scenario.Scenario) bool {
	for _, st := range sc.Steps {
		if strings.HasPrefix(st.Cmd, "start") || st.Cmd == "add-informer" {
			return true
		}
	}
	return false
}

// The samples in docs/over-the-wire.md are what the runs print: each
// fenced block of trace lines follows a comment that names the built-in
// scenario and the step it comes from (<!-- sample: NAME step N -->), and
// each of its lines is a line of that step over the wire.
var (
	sampleLine   = regexp.MustCompile(`^  (request|wire|watch) +\S`)
	sampleSource = regexp.MustCompile(`^<!-- sample: (\S+) step (\d+) -->$`)
)

func TestOverTheWirePageSampleIsCurrent(t *testing.T) {
	t.Parallel()
	page, err := os.ReadFile("../docs/over-the-wire.md")
	if err != nil {
		t.Fatal(err)
	}
	// The sample lines, by the scenario each block names.
	type sample struct {
		line int
		text string
		step string
	}
	samples := map[string][]sample{}
	n, fenced, source := 0, false, ""
	for i, l := range strings.Split(string(page), "\n") {
		if m := sampleSource.FindStringSubmatch(l); m != nil {
			source = m[1] + " step " + m[2]
		}
		if strings.HasPrefix(l, "```") {
			fenced = !fenced
			if !fenced {
				source = ""
			}
			continue
		}
		if !fenced || !sampleLine.MatchString(l) {
			continue
		}
		n++
		name, at, ok := strings.Cut(source, " step ")
		if !ok {
			t.Errorf("docs/over-the-wire.md:%d: a sample line whose block names no source (<!-- sample: NAME step N -->):\n%s", i+1, l)
			continue
		}
		samples[name] = append(samples[name], sample{i + 1, l, at})
	}
	if n < 7 {
		t.Errorf("found %d sample lines in docs/over-the-wire.md; the test expects its three samples' request, wire and watch lines", n)
	}
	// Each scenario runs once over the wire, beside the package's other
	// runs, and each of its sample lines is held to what its step prints.
	for name, lines := range samples {
		t.Run(name, func(t *testing.T) {
			sc, err := Load("scenarios/" + name + ".txt")
			if err != nil {
				t.Fatal(err)
			}
			opts := Options{Seed: 1, Wire: true}
			parallelIn(t, runsStack(sc, opts))
			res, err := Run(context.Background(), sc, opts)
			if err != nil {
				t.Fatal(err)
			}
			printed := map[string]string{} // step n -> what the step prints
			for _, sr := range res.Steps {
				var b strings.Builder
				trace.WriteStep(&b, sr, trace.TextStyle{Impl: trace.Cachelab})
				printed[strconv.Itoa(sr.Index)] = b.String()
			}
			for _, s := range lines {
				if p := printed[s.step]; !strings.Contains(p, s.text+"\n") {
					t.Errorf("docs/over-the-wire.md:%d shows\n%s\nwhich %s step %s does not print over the wire:\n%s", s.line, s.text, name, s.step, p)
				}
			}
		})
	}
}

// Over the wire the connection levers act on the connections: close-watch
// has kube-apiserver end each side's watch response (H7: the stream ends
// without an event, and each client reads that), and disconnect resets
// the TCP connections in the proxy in front of kube-apiserver (H6: each
// client takes the reset as the end of the stream); the next requests
// wait until reconnect and then go through, and a delete made in between
// reaches the indexer. Both sides say so with the same wire lines, and
// agree at every step.
func TestOverTheWireConnectionLevers(t *testing.T) {
	sc, err := scenario.Parse("x.txt", []byte("# A test.\n# Covers: H6 H7\n# Server: watchcache\n\n"+
		"create ns0/a ns0/b\n----\n\nstart\n----\n\nclose-watch\n----\n\ndisconnect\n----\n\ndelete ns0/a\n----\n\nreconnect\n----\n"))
	if err != nil {
		t.Fatal(err)
	}
	parallelIn(t, runsStack(sc, Options{}))
	res, err := Run(context.Background(), sc, Options{Seed: 1, Wire: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Divergence != nil {
		t.Fatal(res.Divergence)
	}
	wireLines := func(step int, impl string) []string {
		var out []string
		evs := res.Steps[step].World
		if impl != "" {
			evs = res.Steps[step].Sides[impl]
		}
		for _, e := range evs {
			if e.Layer == trace.LayerWire && e.Kind != trace.KindWire { // not a try
				out = append(out, e.Detail)
			}
		}
		return out
	}
	for _, impl := range []string{trace.Cachelab, trace.ClientGo} {
		if got, want := wireLines(2, impl), []string{"w1 ended: the server ended its response, and its client read the end of the stream"}; !slices.Equal(got, want) {
			t.Errorf("%s: close-watch's wire lines %q, want %q", impl, got, want)
		}
		if got, want := wireLines(3, impl), []string{"w2 ended: its TCP connection was cut, and its client took the reset as the end of the stream"}; !slices.Equal(got, want) {
			t.Errorf("%s: disconnect's wire lines %q, want %q", impl, got, want)
		}
		gone := false
		for _, e := range res.Steps[5].Sides[impl] {
			gone = gone || e.Layer == trace.LayerIndexer && strings.Contains(e.Detail, "ns0/a@")
		}
		if !gone {
			t.Errorf("%s: after reconnect, a's delete is not in the indexer", impl)
		}
	}
	if got, want := wireLines(3, ""), []string{"the proxy between the informers and kube-apiserver cut 2 TCP connections; each watch ends as its client reads the reset"}; !slices.Equal(got, want) {
		t.Errorf("disconnect's world wire lines %q, want %q", got, want)
	}
}

// Wall time reaches no trace over the wire either (issue 47, case 4;
// kubeapiserver/walltime.go lists every wall-clock timer of the HTTPS
// world). Here a person pauses 11 s at the prompt while the network is
// down and a LIST's retry waits in the proxy in the middle of its TLS
// handshake: with the clients' 10 s handshake timeout it failed then,
// and the trace said so. The paused run prints what the unpaused one
// does (testdata/traces/over-the-wire/held-cache-disconnect.txt). The
// watch timeout, the other timer a pause used to reach, is held to the
// server's clock by kubeapiserver's TestWatchTimeoutIsOnTheServersClock;
// waiting its five minutes here would be no better a test.
func TestPauseOverTheWire(t *testing.T) {
	sc, err := Load("testdata/regress/held-cache-disconnect.txt")
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Seed: 1, Wire: true}
	parallelIn(t, runsStack(sc, opts)) // its pause is 11 s of nothing to do
	opts.OnStep = func(sr trace.StepResult) bool {
		if sr.Cmd == "disconnect" {
			time.Sleep(11 * time.Second) // a person reading the step: the input here, not a wait for anything
		}
		return true
	}
	res, err := Run(context.Background(), sc, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Divergence != nil {
		t.Fatal(res.Divergence)
	}
	var b strings.Builder
	for _, sr := range res.Steps {
		fmt.Fprintf(&b, "%s\n----\n%s\n", sr.Cmd, trace.StepOutput(sr))
	}
	golden.Check(t, filepath.Join("testdata", "traces", "over-the-wire", "held-cache-disconnect.txt"), b.String(), false,
		"the trace over the wire with a pause of 11 s while the network is down")
}

// Wire lines teach HTTP (issue 47, case 13): each says which request it
// is a try of (the watch's id, as the request lines name it, or LIST),
// which try, what the client waited before it (the rule it followed, not
// wall time), its status and the Retry-After the server sent; and a
// watch whose 200 stream later carries an ERROR says that the error came
// inside the stream. The JSON event has each as a typed field. Both
// sides write the same lines (the run agrees at every step).
func TestWireLinesTeachHTTP(t *testing.T) {
	t.Parallel()
	wire := func(t *testing.T, name string, step int) []trace.Event {
		t.Helper()
		sc, err := Load("scenarios/" + name + ".txt")
		if err != nil {
			t.Fatal(err)
		}
		parallelIn(t, runsStack(sc, Options{}))
		res, err := Run(context.Background(), sc, Options{Seed: 1, Wire: true})
		if err != nil {
			t.Fatal(err)
		}
		if res.Divergence != nil {
			t.Fatal(res.Divergence)
		}
		var out []trace.Event
		for _, e := range res.Steps[step-1].Sides[trace.Cachelab] {
			if e.Kind == trace.KindWire {
				out = append(out, e)
			}
		}
		return out
	}
	const watchURI = "/api/v1/pods?allowWatchBookmarks=true&resourceVersion=2&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&timeoutSeconds=300&watch=true"

	t.Run("a retried watch", func(t *testing.T) {
		// watch-cache-not-ready, step 5: the restarted cache is not
		// ready, and answers w2 with 429 and Retry-After: 1, eleven times.
		got := wire(t, "watch-cache-not-ready", 5)
		if len(got) != 11 {
			t.Fatalf("%d wire lines for w2, want 11 tries:\n%v", len(got), got)
		}
		for i, e := range got {
			want := trace.Event{Layer: trace.LayerWire, Kind: trace.KindWire, Op: "GET", Watch: "w2", Try: i + 1, Status: 429, RetryAfter: "1",
				Detail: "w2 GET " + watchURI + " 429 Too Many Requests (Retry-After: 1)"}
			if i > 0 {
				want.Detail = fmt.Sprintf("w2 try %d (after Retry-After: 1s) GET %s 429 Too Many Requests (Retry-After: 1)", i+1, watchURI)
			}
			if d := cmp.Diff(want, e); d != "" {
				t.Errorf("try %d (-want +got):\n%s", i+1, d)
			}
		}
	})
	t.Run("an error inside a 200 stream", func(t *testing.T) {
		// watch-cache-history, step 9: w2 opens (200), and its stream
		// carries the cache's 410; the relist's LIST and w3 follow.
		got := wire(t, "watch-cache-history", 9)
		var lines []string
		for _, e := range got {
			lines = append(lines, e.Detail)
		}
		want := []string{
			"w2 GET /api/v1/namespaces/ns0/pods?allowWatchBookmarks=true&resourceVersion=2&timeoutSeconds=300&watch=true 200 OK",
			"w2 ERROR 410 Expired came inside its 200 OK stream, as an event: the status line had said the watch began",
			"LIST GET /api/v1/namespaces/ns0/pods?resourceVersion=2 200 OK",
			"w3 GET /api/v1/namespaces/ns0/pods?allowWatchBookmarks=true&resourceVersion=212&timeoutSeconds=300&watch=true 200 OK",
		}
		if d := cmp.Diff(want, lines); d != "" {
			t.Fatalf("the wire lines (-want +got):\n%s", d)
		}
		if e := got[1]; e.Op != "ERROR" || e.Watch != "w2" || e.Status != 200 || e.Try != 1 {
			t.Errorf("the stream's ERROR line has op %q, watch %q, status %d, try %d; want ERROR, w2, 200 (its stream's), 1", e.Op, e.Watch, e.Status, e.Try)
		}
		if e := got[2]; e.Watch != "" || e.Try != 1 || e.Status != 200 {
			t.Errorf("the LIST's line has watch %q, try %d, status %d; want none, 1, 200", e.Watch, e.Try, e.Status)
		}
	})
}

// A request that kube-apiserver's handler serves late must not change a
// trace either. A CI run under load found client-go's watch-list still
// in the handler while cachelab's, made at the same moment, already
// waited in the held watch cache: settling took client-go's request for
// waiting too, the clock moved on, and client-go's 504 came a step after
// cachelab's. Here each of client-go's requests waits in the handler,
// once the server has counted it received, for longer than a settle
// takes; settling must wait for it to reach the cache. The scenarios are
// the catalog's that hold the watch cache, where requests wait in it.
func TestRequestLateInKubeAPIServer(t *testing.T) {
	if testing.Short() {
		t.Skip("each of client-go's requests is 300 ms late")
	}
	cat, err := Catalog()
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range cat {
		if sc.WrittenFor() != scenario.ServerWatchCache || !holdsCache(sc) {
			continue
		}
		t.Run(sc.Name, func(t *testing.T) {
			runOverTheWire(t, sc, Options{lateRequests: 300 * time.Millisecond}, "")
		})
	}
}

// holdsCache reports whether sc holds the watch cache back from etcd.
func holdsCache(sc *scenario.Scenario) bool {
	for _, st := range sc.Steps {
		if st.Cmd == "hold-cache" {
			return true
		}
	}
	return false
}
