package reflector

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/utils/clock"
)

// errStopRequested ends a watch because the reflector's context ended.
var errStopRequested = errors.New("reflector: stop requested")

// VeryShortWatchError ends a watch that was closed in under a second
// without delivering a single event: a sign the server is in trouble, so
// the reflector relists after a backoff instead of re-watching at once (F4).
type VeryShortWatchError struct {
	Name string
}

func (e *VeryShortWatchError) Error() string {
	return fmt.Sprintf("very short watch: %s: Unexpected watch close - "+
		"watch lasted less than a second and no items received", e.Name)
}

// isExpired reports a 410: the resourceVersion asked for was compacted.
func isExpired(err error) bool {
	return apierrors.IsResourceExpired(err) || apierrors.IsGone(err)
}

// isTooLargeRV reports a request for a resourceVersion the server has not
// reached yet (a 504 with cause ResourceVersionTooLarge, or the older
// message form).
func isTooLargeRV(err error) bool {
	if apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge) {
		return true
	}
	if !apierrors.IsTimeout(err) {
		return false
	}
	status, ok := err.(apierrors.APIStatus) // not unwrapped, as in client-go
	if !ok || status == nil || status.Status().Details == nil {
		return false
	}
	for _, cause := range status.Status().Details.Causes {
		if cause.Message == "Too large resource version" {
			return true
		}
	}
	return strings.Contains(status.Status().Message, "Too large resource version")
}

// isRetriable reports errors worth waiting out and re-watching: the server
// asked us to slow down (429), or refused the connection.
func isRetriable(err error) bool {
	return utilnet.IsConnectionRefused(err) || apierrors.IsTooManyRequests(err)
}

// DefaultWatchErrorHandler reports an error that ended a ListAndWatch
// through utilruntime.HandleError, except the ordinary endings (410 and
// EOF).
func DefaultWatchErrorHandler(ctx context.Context, r *Reflector, err error) {
	switch {
	case isExpired(err), err == io.EOF, err == io.ErrUnexpectedEOF:
	default:
		utilruntime.HandleErrorWithContext(ctx, err, "Failed to watch", "reflector", r.name, "type", r.typeDescription)
	}
}

// internalErrorRetry decides whether a 500 inside a watch is retried as a
// re-watch: only while errors have kept coming for less than maxDuration,
// where errors more than a minute apart start a new episode. With
// maxDuration 0 (the default) it never retries. It mirrors client-go's
// RetryWithDeadline.
type internalErrorRetry struct {
	maxDuration time.Duration
	clock       clock.PassiveClock
	first, last time.Time
}

const internalErrorEpisodeGap = time.Minute

func (r *internalErrorRetry) observe(err error) {
	if !apierrors.IsInternalError(err) {
		return
	}
	now := r.clock.Now()
	if now.Sub(r.last) >= internalErrorEpisodeGap {
		r.first, r.last = time.Time{}, time.Time{}
	}
	if r.first.IsZero() {
		r.first = now
	}
	r.last = now
}

func (r *internalErrorRetry) shouldRetry() bool {
	if r.maxDuration <= 0 {
		return false
	}
	if r.clock.Now().Sub(r.first) <= r.maxDuration {
		return true
	}
	r.first, r.last = time.Time{}, time.Time{}
	return false
}
