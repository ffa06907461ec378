package sim

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	clientfeatures "k8s.io/client-go/features"

	"github.com/cachelab/cachelab/informer"
	"github.com/cachelab/cachelab/sim/scenario"
)

// Runs may overlap in one process only in the same stack: client-go's
// feature gates, which select the stack, are process-wide. A run in the
// other stack is refused while one holds them, and they are set for it
// once the first has closed.
func TestOverlappingRunsShareAStack(t *testing.T) {
	ctx := context.Background()
	sc, err := scenario.Parse("overlap.txt", []byte(script("create ns0/a")))
	if err != nil {
		t.Fatal(err)
	}
	open := func(st informer.Stack) (*Session, error) {
		return Open(ctx, sc, Options{Seed: 1, Stack: st})
	}
	first, err := open(informer.Default)
	if err != nil {
		t.Fatal(err)
	}
	second, err := open(informer.Default)
	if err != nil {
		t.Fatalf("a second run in the same stack: %v", err)
	}
	if _, err := open(informer.Classic); err == nil || !strings.Contains(err.Error(), "cannot overlap") {
		t.Errorf("a run in the classic stack during two in the default one: got %v, want a refusal", err)
	}
	first.Close()
	if _, err := open(informer.Classic); err == nil {
		t.Errorf("a run in the classic stack while one in the default stack is still open: not refused")
	}
	second.Close()
	classic, err := open(informer.Classic)
	if err != nil {
		t.Fatalf("a run in the classic stack after the others closed: %v", err)
	}
	defer classic.Close()
	if clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient) {
		t.Errorf("the classic run's gates were not set: WatchListClient is on")
	}
}

// A reflector makes its resync timer on a goroutine of its own once its
// watch loop starts (both stacks), which a settled step once did not
// wait for. On a busy machine that goroutine can run after the next step has
// moved the clock, and the resync it should have fired came a period
// late, on one side or both (found by go test ./sim -count=20). The tick
// is handled on that goroutine too, and in the queue world settling once
// took the step as done before it was (found the same way). With every
// timer made late and every tick handed on late, on purpose, each
// scenario that resyncs must run exactly as it does otherwise: "advance"
// waits until the timers are armed, and settling until a fired tick is
// handled.
//
// The same for client-go's re-watch backoff after a 429, which it waits on
// the clock's After: parked as soon as the 429 was answered, a late
// reflector let the step settle before it had asked the clock for its
// wait, and the next step's advance moved the clock past the end of a
// wait not yet made, so client-go re-watched a step after cachelab
// (watch-errors, seen under heavy load: "w3 WATCH rv=2" on cachelab's
// side only).
func TestLateResyncTimers(t *testing.T) {
	for _, file := range []string{"scenarios/resync-vs-relist.txt", "scenarios/handler-resync-periods.txt", "testdata/regress/resync-at-watch-timeout.txt", "scenarios/watch-errors.txt"} {
		t.Run(file, func(t *testing.T) {
			sc, err := Load(file)
			if err != nil {
				t.Fatal(err)
			}
			run := func(late time.Duration) *Result {
				res, err := Run(context.Background(), sc, Options{Seed: 1, lateTimers: late})
				if err != nil {
					t.Fatal(err)
				}
				if res.Divergence != nil {
					t.Fatal(res.Divergence)
				}
				return res
			}
			if d := cmp.Diff(run(0), run(100*time.Millisecond)); d != "" {
				t.Errorf("with late resync timers the run differs (-on time +late):\n%s", d)
			}
		})
	}
}
