package world

import (
	"context"
	"testing"
	"time"

	"github.com/cachelab/cachelab/sim/trace"
	"k8s.io/apimachinery/pkg/watch"
	clocktesting "k8s.io/utils/clock/testing"
)

// A watch the connection or the reflector ends (close-watch, Stop) leaves no
// "closed by the server" line, even when the relay finds its stream
// closed and its stop closed at once and Go's select picks the stream.
// (Found by go test ./sim -count=20: one run in twenty printed the line
// for client-go's watch after a close-watch step, and the layer
// diverged.) Each relay below starts with both ready.
func TestEndedWatchLeavesNoServerCloseLine(t *testing.T) {
	rec := &trace.Recorder{}
	p := NewConn(nil, clocktesting.NewFakeClock(time.Unix(0, 0)), rec)
	for i := range 200 {
		inner := watch.NewFake()
		w := &connWatch{id: "w1", p: p, ctx: context.Background(), inner: inner,
			out: make(chan watch.Event), stop: make(chan struct{}), done: make(chan struct{})}
		close(w.stop)
		inner.Stop() // the stream is closed too
		w.relay()
		if got := rec.Take(); len(got) != 0 {
			t.Fatalf("relay %d of 200 recorded %q for a watch the connection ended", i+1, got[0].Text())
		}
	}
}
