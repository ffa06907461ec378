package sim

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cachelab/cachelab/sim/scenario"
	"github.com/cachelab/cachelab/sim/trace"
)

// A verdict must not change with machine load (issue 47). Load shows
// as a goroutine that runs late, and the moments that matter are where
// a component reads the scenario's clock: a watch's start, a deadline, a
// backoff's end, a resync's due time. Read after the next step moved the
// clock, any of them changes the trace (a watch judged "very short", a
// resync a period late). lateReads makes every such read late on
// purpose, the sides' and the world's (the watch cache, kube-apiserver's
// and the etcd world's watch deadlines), and lateTimers every timer made
// and every tick handed on: a run must print exactly what it prints on
// time, in each world it runs in. Settling waits for it (parked.go).
//
// Always run: the scenarios where late reads changed the trace before
// settling waited for every goroutine of a side (relist-after-compaction,
// the issue's; and the four more this test found). Then a slice of the
// rest, which moves on each day (lateSample).
func TestLateClockReads(t *testing.T) {
	always := []string{"relist-after-compaction", "missed-delete-tombstone", "recreated-object", "resync-vs-relist", "stale-cache"}
	cat, err := Catalog()
	if err != nil {
		t.Fatal(err)
	}
	var rest []*scenario.Scenario
	var picked []*scenario.Scenario
	for _, sc := range cat {
		if slices.Contains(always, sc.Name) {
			picked = append(picked, sc)
		} else {
			rest = append(rest, sc)
		}
	}
	picked = append(picked, sample(t, rest, 6)...)
	for _, sc := range picked {
		t.Run(sc.Name, func(t *testing.T) { runLate(t, sc, Options{}) })
		if sc.WrittenFor() == scenario.ServerWatchCache {
			t.Run(sc.Name+"/over-the-wire", func(t *testing.T) { runLate(t, sc, Options{Wire: true}) })
		}
		if sc.Server == scenario.ServerAny {
			other := scenario.ServerWatchCache
			if sc.WrittenFor() == scenario.ServerWatchCache {
				other = scenario.ServerEtcd
			}
			t.Run(sc.Name+"/other-world", func(t *testing.T) { runLate(t, sc, Options{Server: other}) })
		}
	}
}

// runLate runs sc with every read of the clock and every timer late, and
// holds its trace to the one it prints on time: the file's expected
// output (without wire lines, over the wire), or in the other world
// testdata/traces/other-world.
func runLate(t *testing.T, sc *scenario.Scenario, opts Options) {
	// Not side by side (parallel_test.go): every clock read of these
	// runs sleeps, and eight of them at once under -race kept a watch
	// cache from ever being seen quiet within the settle timeout.
	opts.Seed, opts.lateReads, opts.lateTimers = 1, 10*time.Millisecond, 10*time.Millisecond
	want := expectedTrace(sc)
	if opts.Server != "" {
		b, err := os.ReadFile(filepath.Join("testdata", "traces", "other-world", sc.Name+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		want = string(b)
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
		if opts.Server != "" {
			fmt.Fprintf(&b, "%s\n----\n%s\n", sr.Cmd, trace.StepOutput(sr))
		} else {
			b.WriteString(trace.StepOutputWithout(sr, trace.LayerWire))
		}
	}
	if d := cmp.Diff(want, b.String()); d != "" {
		t.Errorf("with the clock read late the trace differs (-on time +late):\n%s", d)
	}
}

// sample is the n of all that a CI run covers when all would cost too
// much: the slice for today (UTC), so that every scenario comes round
// within len(all)/n days and a failure is reproducible on the day it
// was found, or at any time with CACHELAB_SAMPLE=<slice> (which the test
// logs).
func sample(t *testing.T, all []*scenario.Scenario, n int) []*scenario.Scenario {
	t.Helper()
	slices := (len(all) + n - 1) / n
	k := int(time.Now().UTC().Unix()/86400) % slices
	if s := os.Getenv("CACHELAB_SAMPLE"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 0 || v >= slices {
			t.Fatalf("CACHELAB_SAMPLE=%q: want a slice from 0 to %d", s, slices-1)
		}
		k = v
	}
	t.Logf("sampled slice %d of %d (CACHELAB_SAMPLE=%d runs it again)", k, slices, k)
	return all[k*n : min((k+1)*n, len(all))]
}
