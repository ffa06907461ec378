package sim

import (
	"testing"
	"time"

	"github.com/cachelab/cachelab/reflector"
)

// client-go's n-th re-watch backoff waits cachelab's n-th draw when both
// are draws of one step of the sequence (F6), and its own otherwise.
func TestBackoffJitterPairsDraws(t *testing.T) {
	j := newBackoffJitter()
	never := make(chan struct{})
	j.drawn(1578 * time.Millisecond)
	j.drawn(2 * time.Second)
	if got := j.forClientGo(900*time.Millisecond, never); got != 1578*time.Millisecond {
		t.Errorf("first backoff, both in [0.8s, 1.6s): got %v, want cachelab's 1.578s", got)
	}
	if got := j.forClientGo(5*time.Second, never); got != 5*time.Second {
		t.Errorf("second backoff, 5s against cachelab's 2s (different steps): got %v, want client-go's own 5s", got)
	}
}

// A draw cachelab makes after client-go asked is waited for; a side that
// stops meanwhile waits its own.
func TestBackoffJitterWaitsForCachelab(t *testing.T) {
	j := newBackoffJitter()
	never := make(chan struct{})
	got := make(chan time.Duration)
	go func() { got <- j.forClientGo(1200*time.Millisecond, never) }()
	j.drawn(1500 * time.Millisecond)
	if d := <-got; d != 1500*time.Millisecond {
		t.Errorf("got %v, want cachelab's 1.5s, drawn after client-go asked", d)
	}
	stopped := make(chan struct{})
	close(stopped)
	if d := j.forClientGo(3300*time.Millisecond, stopped); d != 3300*time.Millisecond {
		t.Errorf("stopped side: got %v, want its own 3.3s", d)
	}
}

func TestSameBackoffStep(t *testing.T) {
	for _, c := range []struct {
		a, b time.Duration
		want bool
	}{
		{800 * time.Millisecond, 1599 * time.Millisecond, true},
		{1599 * time.Millisecond, 1600 * time.Millisecond, false},
		{35 * time.Second, 59 * time.Second, true}, // the capped step, [30s, 60s)
		{26 * time.Second, 50 * time.Second, true}, // 25.6s's step
		{700 * time.Millisecond, 700 * time.Millisecond, false},
	} {
		if got := reflector.SameStep(c.a, c.b); got != c.want {
			t.Errorf("reflector.SameStep(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}
