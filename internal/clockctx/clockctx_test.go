package clockctx

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The context ends when the clock passes the timeout, not before, and
// says no deadline.
func TestEndsOnTheClock(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	ctx, cancel := WithTimeout(context.Background(), clk, time.Minute)
	defer cancel()
	if _, ok := ctx.Deadline(); ok {
		t.Error("the context reports a deadline; gRPC would read it as wall-clock time")
	}
	if !clk.HasWaiters() {
		t.Fatal("no timer on the clock: WithTimeout makes it before it returns")
	}
	clk.Step(59 * time.Second)
	select {
	case <-ctx.Done():
		t.Fatal("ended at 59s of a 1m timeout")
	default:
	}
	clk.Step(time.Second)
	<-ctx.Done() // the timer's goroutine cancels it; a hang here is the bug
	if ctx.Err() != context.Canceled {
		t.Errorf("Err() = %v, want context.Canceled", ctx.Err())
	}
}

// Without a timeout it ends only by cancel, and leaves no timer behind.
func TestNoTimeout(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	ctx, cancel := WithTimeout(context.Background(), clk, 0)
	if clk.HasWaiters() {
		t.Error("a timer was made for no timeout")
	}
	cancel()
	<-ctx.Done()
}

// Cancelling first stops the timer's goroutine (goleak checks).
func TestCancelStopsTheTimer(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	_, cancel := WithTimeout(context.Background(), clk, time.Hour)
	cancel()
}
