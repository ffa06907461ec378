package consistencydetector_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"

	"github.com/cachelab/cachelab/consistencydetector"
)

// timedLister fails its first `failures` LISTs, then answers with an
// empty list, and notes when each call came, in the bubble's time.
type timedLister struct {
	failures int
	start    time.Time
	calls    []time.Duration
	onCall   func(n int)
}

func (l *timedLister) List(context.Context, metav1.ListOptions) (runtime.Object, error) {
	l.calls = append(l.calls, time.Since(l.start))
	if l.onCall != nil {
		l.onCall(len(l.calls))
	}
	if len(l.calls) <= l.failures {
		return nil, errors.New("etcd is down")
	}
	return &v1.PodList{}, nil
}

func quietContext() context.Context { return klog.NewContext(context.Background(), logr.Discard()) }

// TestRetryEverySecond: a failing LIST is tried at once, then each
// second of the real clock (a bubble's, here), until it answers (V4).
func TestRetryEverySecond(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := &timedLister{failures: 3, start: time.Now()}
		consistencydetector.CheckDataConsistency(quietContext(), "r", "9", l.List, nil, metav1.ListOptions{}, func() []runtime.Object { return nil })
		want := []time.Duration{0, time.Second, 2 * time.Second, 3 * time.Second}
		if len(l.calls) != len(want) {
			t.Fatalf("tries at %v, want %v", l.calls, want)
		}
		for i := range want {
			if l.calls[i] != want[i] {
				t.Errorf("tries at %v, want %v", l.calls, want)
				break
			}
		}
	})
}

// TestRetryTickerStartsBeforeTheFirstTry: the ticker is started before
// the first try, so a try that took 600 ms is retried 400 ms after it
// failed, not a second after (V4, wait.PollUntilContextCancel's
// fixed timer).
func TestRetryTickerStartsBeforeTheFirstTry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := &timedLister{failures: 1, start: time.Now()}
		l.onCall = func(n int) {
			if n == 1 {
				time.Sleep(600 * time.Millisecond) // fake time: the bubble's clock
			}
		}
		consistencydetector.CheckDataConsistency(quietContext(), "r", "9", l.List, nil, metav1.ListOptions{}, func() []runtime.Object { return nil })
		if len(l.calls) != 2 || l.calls[1] != time.Second {
			t.Errorf("tries at %v, want [0s 1s]", l.calls)
		}
	})
}

// TestRetryEndsWithTheContext: once the context ends, no further try is
// made and the check returns without panicking, though what it retrieved
// was never compared (V4).
func TestRetryEndsWithTheContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(quietContext())
		l := &timedLister{failures: 1000, start: time.Now()}
		go func() {
			time.Sleep(2500 * time.Millisecond)
			cancel()
		}()
		consistencydetector.CheckDataConsistency(ctx, "r", "9", l.List, nil, metav1.ListOptions{}, func() []runtime.Object { return []runtime.Object{&v1.Pod{}} })
		if len(l.calls) != 3 {
			t.Errorf("tries at %v, want 3 (0s, 1s, 2s), none after the context ended at 2.5s", l.calls)
		}
	})
}
