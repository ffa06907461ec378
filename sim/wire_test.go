package sim

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/cachelab/cachelab/informer"
	"github.com/cachelab/cachelab/internal/golden"
	"github.com/cachelab/cachelab/sim/scenario"
	"github.com/cachelab/cachelab/sim/trace"
)

// Over the wire (--server apiserver) every built-in scenario written for
// the watch cache runs with both informers reaching kube-apiserver over
// HTTPS, each through its own implementation's HTTP client. Two things
// are checked at every step: cachelab and client-go agree, the wire
// lines (each try of each request, H1-H7) included; and the story is the
// one the scenario tells in process: its expected output, once the wire
// lines are taken out, is what it printed. The wire adds requests on a
// socket, not a different world.
func TestScenariosOverTheWire(t *testing.T) {
	files, err := filepath.Glob("scenarios/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	for _, file := range files {
		sc, err := Load(file)
		if err != nil {
			t.Fatal(err)
		}
		if sc.WrittenFor() != scenario.ServerWatchCache || !overTheWire(sc) {
			continue
		}
		t.Run(filepath.Base(file), func(t *testing.T) { runOverTheWire(t, file, sc) })
		t.Run(filepath.Base(file)+"/other-stack", func(t *testing.T) { otherStackOverTheWire(t, sc) })
	}
}

// otherStackOverTheWire runs a scenario in its other stack over the wire:
// both sides agree at every step, and without its wire lines the trace is
// the one in process (testdata/traces/other-stack, which
// TestScenariosInTheOtherStack holds the in-process run to).
func otherStackOverTheWire(t *testing.T, sc *scenario.Scenario) {
	other := informer.Classic
	if stackOf(sc) == informer.Classic {
		other = informer.Default
	}
	res, err := Run(context.Background(), sc, Options{Seed: 1, Stack: other, Wire: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Divergence != nil {
		t.Fatal(res.Divergence)
	}
	var b strings.Builder
	for _, sr := range res.Steps {
		fmt.Fprintf(&b, "%s\n----\n%s\n", sr.Cmd, trace.StepOutputWithout(sr, trace.LayerWire))
	}
	golden.Check(t, filepath.Join("testdata", "traces", "other-stack", sc.Name+".txt"), b.String(), false,
		"the other stack's trace over the wire, without its wire lines")
}

// overTheWire reports whether a scenario is run over the wire here. Two
// are not, both for a request that waits in the watch cache for it to
// catch up with etcd (a consistent read, C6), where settling over the
// wire is not yet deterministic: watch-cache-consistent-read failed 1
// run in 5 under -race (a side's re-watch in the step or not), and in
// watch-cache-etcd-restore's classic stack the 504 "Too large resource
// version" that ends such a wait carries Retry-After: 1, so over HTTP
// both REST clients try the LIST again (H4) where in process the
// reflector gets the 504: the story differs from the in-process trace
// this test holds it to, and its retries wait on the wall clock while
// the cache waits on the scenario's.
func overTheWire(sc *scenario.Scenario) bool {
	return sc.Name != "watch-cache-consistent-read" && sc.Name != "watch-cache-etcd-restore"
}

func startsAnInformer(sc *scenario.Scenario) bool {
	for _, st := range sc.Steps {
		if strings.HasPrefix(st.Cmd, "start") || st.Cmd == "add-informer" {
			return true
		}
	}
	return false
}

func runOverTheWire(t *testing.T, file string, sc *scenario.Scenario) {
	ses, err := Open(context.Background(), sc, Options{Seed: 1, Wire: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ses.Close()
	i, wireLines := 0, 0
	datadriven.RunTest(t, file, func(t *testing.T, d *datadriven.TestData) string {
		st := sc.Steps[i]
		i++
		sr, err := ses.Step(st)
		if err != nil {
			t.Fatal(err)
		}
		if sr.Divergence != nil {
			t.Errorf("%v", sr.Divergence)
		}
		for _, e := range sr.Sides[trace.Cachelab] {
			if e.Layer == trace.LayerWire {
				wireLines++
			}
		}
		return trace.StepOutputWithout(sr, trace.LayerWire)
	})
	if d := ses.Finish(); d != nil {
		t.Error(d)
	}
	if wireLines == 0 && startsAnInformer(sc) {
		t.Errorf("no wire line in a run whose informer started")
	}
}

// The sample in docs/over-the-wire.md is what the run prints: each of its
// trace lines is a line of add-update-delete's step 3 over the wire.
var sampleLine = regexp.MustCompile(`^  (request|wire|watch) +\S`)

func TestOverTheWirePageSampleIsCurrent(t *testing.T) {
	page, err := os.ReadFile("../docs/over-the-wire.md")
	if err != nil {
		t.Fatal(err)
	}
	sc, err := Load("scenarios/add-update-delete.txt")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), sc, Options{Seed: 1, Wire: true})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	trace.WriteStep(&b, res.Steps[2], trace.TextStyle{Impl: trace.Cachelab})
	printed := b.String()
	n, fenced := 0, false
	for _, l := range strings.Split(string(page), "\n") {
		if strings.HasPrefix(l, "```") {
			fenced = !fenced
			continue
		}
		if !fenced || !sampleLine.MatchString(l) {
			continue
		}
		n++
		if !strings.Contains(printed, l+"\n") {
			t.Errorf("docs/over-the-wire.md shows\n%s\nwhich step 3 does not print:\n%s", l, printed)
		}
	}
	if n < 3 {
		t.Errorf("found %d sample lines in docs/over-the-wire.md; the test expects the request, wire and watch lines", n)
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
			if e.Layer == trace.LayerWire && !strings.HasPrefix(e.Detail, "GET ") {
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
