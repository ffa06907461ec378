// Package clockctx ends a context when a clock, not the wall clock, has
// moved on by a timeout: a watch's TimeoutSeconds, measured as
// kube-apiserver measures it, on whatever clock the server runs on (a
// scenario's fake clock in cachelab). context.WithTimeout would measure
// wall-clock time.
//
// The context does not report the timeout as its Deadline: a fake
// clock's time means nothing to gRPC, which would turn a deadline read
// from it into a wall-clock timeout of its own. A caller that must say
// the deadline (kube-apiserver's storage reads it) wraps the context and
// keeps gRPC from seeing it.
package clockctx

import (
	"context"
	"time"

	"k8s.io/utils/clock"
)

// WithTimeout returns a context cancelled by its cancel function, with
// ctx, or once clk has passed timeout from now; timeout <= 0 means never.
func WithTimeout(ctx context.Context, clk clock.Clock, timeout time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	if timeout <= 0 {
		return ctx, cancel
	}
	t := clk.NewTimer(timeout)
	go func() {
		defer t.Stop()
		select {
		case <-t.C():
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}
