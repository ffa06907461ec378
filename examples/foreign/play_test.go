package foreign

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cachelab/cachelab/controllertest"
)

// playAndReplay plays e at p, which must break want (in order), then
// plays the file its outcome gives, which must break the same.
func playAndReplay(t *testing.T, e controllertest.Explore, p controllertest.Placement, want []string) {
	t.Helper()
	got := play(t, e, p)
	if diff := cmp.Diff(want, got.BrokenInvariants()); diff != "" {
		t.Errorf("%s: the invariants broken (-want +got):\n%s\n%s", got.Where, diff, strings.Join(got.Trace, "\n"))
	}
	story, err := controllertest.ParseStory("replay.story", []byte(got.File))
	if err != nil {
		t.Fatalf("%s: its file: %v\n%s", got.Where, err, got.File)
	}
	again := e
	again.Story = story
	replayed := again.Play(context.Background(), controllertest.Placement{})
	if replayed.Err != nil {
		t.Fatalf("%s, replayed from its file: %v", got.Where, replayed.Err)
	}
	if diff := cmp.Diff(got.BrokenInvariants(), replayed.BrokenInvariants()); diff != "" {
		t.Errorf("%s, replayed from its file: the invariants broken (-played +replayed):\n%s", got.Where, diff)
	}
}

// play plays e at p, failing the test if the play could not be made.
// CACHELAB_LOG_TRACES=1 logs the trace.
func play(t *testing.T, e controllertest.Explore, p controllertest.Placement) controllertest.Outcome {
	t.Helper()
	got := e.Play(context.Background(), p)
	if got.Err != nil {
		t.Fatalf("%s: %v", got.Where, got.Err)
	}
	if os.Getenv("CACHELAB_LOG_TRACES") != "" {
		t.Logf("%s:\n%s", got.Where, strings.Join(got.Trace, "\n"))
	}
	return got
}
