package wire

import (
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/utils/clock"
)

// limiter is a client's own rate limit on requests: a token bucket of
// Burst tokens refilled at QPS a second (client-go's REST client: 5 and
// 10 unless configured), on a clock of the caller's choosing. A request
// that finds the bucket empty waits for a token; one whose context would
// end first does not wait at all.
type limiter struct {
	bucket *rate.Limiter
	clock  clock.Clock
}

func newLimiter(qps float32, burst int, clk clock.Clock) *limiter {
	if qps <= 0 {
		return nil
	}
	return &limiter{bucket: rate.NewLimiter(rate.Limit(qps), burst), clock: clk}
}

// wait takes a token, waiting for one if the bucket is empty. A context
// error is returned as it is; any other says it is the limiter's.
func (l *limiter) wait(ctx context.Context) error {
	if l == nil {
		return nil
	}
	err := l.take(ctx)
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("client rate limiter Wait returned an error: %w", err)
	}
	return err
}

func (l *limiter) take(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	now := l.clock.Now()
	r := l.bucket.ReserveN(now, 1)
	delay := r.DelayFrom(now)
	if delay == 0 {
		return nil
	}
	if d, ok := ctx.Deadline(); ok && time.Until(d) < delay {
		r.CancelAt(now)
		return fmt.Errorf("rate: Wait(n=1) would exceed context deadline")
	}
	t := l.clock.NewTimer(delay)
	defer t.Stop()
	select {
	case <-t.C():
		return nil
	case <-ctx.Done():
		r.CancelAt(l.clock.Now())
		return ctx.Err()
	}
}
