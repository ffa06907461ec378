package sim

import (
	"context"
	"strings"
	"testing"

	"github.com/cachelab/cachelab/informer"
	"github.com/cachelab/cachelab/sim/trace"
)

// In the classic stack, watch-cache-not-ready's relist gets 429 from the
// restarted cache and its retry is held. release-cache lets the retry go
// only once the cache has listed etcd, so in that step each side's LIST
// is answered from the ready cache. Let go at once, a retry raced the
// cache's list: CI once saw cachelab's answered and client-go's get 429
// again, and the step did not settle.
func TestReleaseCacheAnswersHeldListsReady(t *testing.T) {
	parallelIn(t, informer.Classic)
	sc, err := Load("watch-cache-not-ready")
	if err != nil {
		t.Fatal(err)
	}
	var released *trace.StepResult
	res, err := Run(context.Background(), sc, Options{Seed: 1, Stack: informer.Classic, OnStep: func(s trace.StepResult) bool {
		if s.Cmd == "release-cache" {
			released = &s
		}
		return true
	}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Divergence != nil {
		t.Fatal(res.Divergence)
	}
	if released == nil {
		t.Fatal("the run had no release-cache step")
	}
	for _, side := range []string{trace.Cachelab, trace.ClientGo} {
		text := trace.Format(released.Sides[side])
		if !strings.Contains(text, "items, rv 3 (from cache)") || strings.Contains(text, "429") {
			t.Errorf("%s's release-cache step: want the held LIST answered from the cache at rv 3, and no 429; got:\n%s", side, text)
		}
	}
}
