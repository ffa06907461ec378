package sim

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	cgdetector "k8s.io/client-go/util/consistencydetector"

	"github.com/cachelab/cachelab/consistencydetector"
	"github.com/cachelab/cachelab/informer"
	"github.com/cachelab/cachelab/sim/scenario"
	"github.com/cachelab/cachelab/sim/trace"
)

// detection is the detector's panic as both implementations raise it
// (REFERENCE.md V5).
const detection = "data inconsistency detected for pods, panicking!"

// containDetection contains the detector's panic on a side's goroutine
// only: it records the detection there, stops the side's informer and
// ends the goroutine (the code after it never runs; its defers do). Any
// other panic, and a detection on a goroutine no run watches, it leaves
// alone: it returns, and utilruntime.HandleCrash goes on as it would
// (V6).
func TestContainDetectionOnlyContainsDetections(t *testing.T) {
	for _, p := range []any{"boom", errors.New(detection), detection} {
		containDetection(context.Background(), p) // returns: no side watches this goroutine
	}

	ctx, cancel := context.WithCancel(context.Background())
	s := &side{id: newSideID(), impl: trace.ClientGo, rec: &trace.Recorder{}, cancel: cancel}
	watchForDetections(s)
	defer forgetDetections(s)
	var wg sync.WaitGroup
	after, deferred := false, false
	s.do(func() {
		wg.Go(func() {
			defer func() { deferred = true }()
			containDetection(context.Background(), "boom")
			containDetection(context.Background(), detection)
			after = true
		})
	})
	wg.Wait()
	if after || !deferred {
		t.Errorf("the goroutine went on after the detection (%t), or its defers did not run (%t)", after, deferred)
	}
	if !s.crashed.Load() || ctx.Err() == nil {
		t.Errorf("crashed=%t, context ended=%t: want the informer stopped", s.crashed.Load(), ctx.Err() != nil)
	}
	events := s.rec.Take()
	if len(events) != 1 || events[0].Layer != trace.LayerLog || !strings.Contains(events[0].Detail, `panic "data inconsistency detected for <its name>, panicking!"`) {
		t.Errorf("recorded %v, want one log line with the panic", events)
	}
}

// A detection on one side only is a divergence in the log layer, at the
// step that caught it: here cachelab's watch-list, and only cachelab's,
// loses ns0/b, so cachelab's detector panics and client-go's informer
// syncs (V6). The run ends cleanly, client-go's informer still running.
func TestOneSidedDetectionIsADivergence(t *testing.T) {
	for _, i := range []int{0, 1} {
		sc, err := scenario.Parse("x.txt", []byte("# One side loses ns0/b.\n# Server: etcd\n# Env: "+scenario.EnvDetector+"=true\n\n"+
			"create ns0/a ns0/b\n----\n\nstart\n----\n"))
		if err != nil {
			t.Fatal(err)
		}
		ses, err := Open(context.Background(), sc, Options{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ses.Step(sc.Steps[0]); err != nil {
			t.Fatal(err)
		}
		lossy := ses.r.sides[i]
		lossy.conn.LoseFromNextWatchList("ns0/b")
		sr, err := ses.Step(sc.Steps[1])
		ses.Close()
		if err != nil {
			t.Fatal(err)
		}
		d := sr.Divergence
		if d == nil || d.Layer != trace.LayerLog || !strings.Contains(d.Diff, "data inconsistency detected") {
			t.Fatalf("%s's watch-list lost ns0/b: divergence %v, want one in layer log with the panic", lossy.impl, d)
		}
		if !lossy.crashed.Load() || lossy.peer.crashed.Load() {
			t.Errorf("crashed: %s %t, %s %t; want only %s", lossy.impl, lossy.crashed.Load(), lossy.peer.impl, lossy.peer.crashed.Load(), lossy.impl)
		}
	}
}

// A run with the other detector setting waits for the runs in progress
// to end, until its context ends; then it has the process, with both
// implementations' switch as it asks. A run in the other stack is still
// refused at once.
func TestClaimWaitsForTheOtherDetectorSetting(t *testing.T) {
	if err := claimProcess(context.Background(), informer.Default, true); err != nil {
		t.Fatal(err)
	}
	if !cgdetector.IsDataConsistencyDetectionForWatchListEnabled() || !consistencydetector.IsDataConsistencyDetectionForWatchListEnabled() {
		t.Error("a run with the detector on: a switch is off")
	}
	if err := claimProcess(context.Background(), informer.Classic, true); err == nil || !strings.Contains(err.Error(), "stack") {
		t.Errorf("a run in the other stack: %v, want refused", err)
	}
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	if err := claimProcess(ended, informer.Default, false); err == nil || !strings.Contains(err.Error(), "waiting for the runs with the data consistency detector on to end") {
		t.Errorf("a run with the detector off, its context ended: %v, want the wait's error", err)
	}
	claimed := make(chan error)
	go func() { claimed <- claimProcess(context.Background(), informer.Default, false) }()
	releaseProcess()
	if err := <-claimed; err != nil {
		t.Fatal(err)
	}
	if cgdetector.IsDataConsistencyDetectionForWatchListEnabled() || consistencydetector.IsDataConsistencyDetectionForWatchListEnabled() {
		t.Error("a run with the detector off: a switch is on")
	}
	releaseProcess()
}
