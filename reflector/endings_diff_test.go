package reflector_test

import (
	"fmt"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	dt "github.com/cachelab/cachelab/internal/difftest"
)

// The reaction to every kind of watch ending (F4), in the classic LIST +
// WATCH mode. Each case starts synced at RV 2 with a watch open, does
// something to the watch, and compares what both reflectors ask for next,
// at once and after the first backoff step.
func TestWatchEndings(t *testing.T) {
	gone := &apierrors.NewResourceExpired("too old resource version: 1 (2)").ErrStatus
	internal := &apierrors.NewInternalError(errString("etcd hiccup")).ErrStatus
	tooMany := &apierrors.NewTooManyRequests("slow down", 1).ErrStatus
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	rewatch := `request: watch rv="2" bookmarks=true timeout=in[300,600)`
	relist := `request: list rv="2"`
	for _, tc := range []struct {
		name  string
		cfg   dt.ReflectorConfig
		do    func(s *dt.Server)
		now   string // the request that must come at once ("" for none)
		later string // the request after the first backoff step
	}{
		{name: "closed after events: re-watch at once", do: func(s *dt.Server) { s.Bookmark(); s.CloseWatches() }, now: rewatch, cfg: dt.ReflectorConfig{Bookmarks: true}},
		{name: "closed in under 1s with nothing: relist after backoff", do: (*dt.Server).CloseWatches, later: relist},
		{name: "410 in the stream: relist after backoff", do: func(s *dt.Server) { s.BreakWatches(gone) }, later: relist},
		{name: "500 in the stream: relist after backoff", do: func(s *dt.Server) { s.BreakWatches(internal) }, later: relist},
		{name: "500 in the stream with retries allowed: re-watch at once", do: func(s *dt.Server) { s.BreakWatches(internal) }, now: rewatch,
			cfg: dt.ReflectorConfig{MaxInternalErrorRetryDuration: time.Minute}},
		{name: "429 in the stream: re-watch after backoff", do: func(s *dt.Server) { s.BreakWatches(tooMany) }, later: rewatch},
		{name: "429 from the Watch call: re-watch after backoff", do: func(s *dt.Server) {
			s.FailNextWatch(apierrors.NewTooManyRequests("slow down", 1))
			s.Bookmark()
			s.CloseWatches()
		}, now: rewatch, later: rewatch, cfg: dt.ReflectorConfig{Bookmarks: true}},
		{name: "connection refused from the Watch call: re-watch after backoff", do: func(s *dt.Server) {
			s.FailNextWatch(refused)
			s.Bookmark()
			s.CloseWatches()
		}, now: rewatch, later: rewatch, cfg: dt.ReflectorConfig{Bookmarks: true}},
		{name: "410 from the Watch call: relist after backoff", do: func(s *dt.Server) {
			s.FailNextWatch(apierrors.NewResourceExpired("gone"))
			s.Bookmark()
			s.CloseWatches()
		}, now: rewatch, later: relist, cfg: dt.ReflectorConfig{Bookmarks: true}},
		{name: "LIST failing: relist after backoff", do: func(s *dt.Server) {
			s.FailNextList(apierrors.NewInternalError(errString("boom")))
			s.BreakWatches(gone)
		}, later: relist},
		{name: "resync failing: relist after backoff", do: func(s *dt.Server) {}, later: relist,
			cfg: dt.ReflectorConfig{ResyncPeriod: time.Minute, FailResync: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := []string{}
			if tc.now != "" {
				want = append(want, "-- now\n"+tc.now)
			}
			if tc.later != "" {
				want = append(want, "-- 1.6s later\n"+tc.later)
			}
			run(t, tc.cfg, func(w *dt.ReflectorWorld) {
				w.Create(pod("ns/a"))
				w.Start()
				if tc.cfg.ResyncPeriod > 0 {
					time.Sleep(tc.cfg.ResyncPeriod)
				}
				w.Both("the watch ends", tc.do)
				w.Note("-- now")
				w.Settle()
				w.Advance(1600 * time.Millisecond)
			}, want...)
		})
	}
}

// client-go: reflector.go NewReflectorWithOptions, wait.Backoff
// DelayWithReset (F6). Every LIST fails for five minutes; each side's
// waits between attempts must follow the backoff rule: base delays 0.8,
// 1.6, ... 25.6, then 30 s, each jittered into [base, 2*base), starting
// over at the first draw more than 2 min after the last restart. The
// jitter is random (client-go's is unseeded), so each side is checked
// against the rule and the verdicts are compared.
func TestBackoffSequence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := dt.NewReflectorWorld(t, dt.ReflectorConfig{})
		start := time.Now()
		w.Both("every LIST fails", func(s *dt.Server) {
			for range 60 {
				s.FailNextList(apierrors.NewInternalError(errString("down")))
			}
		})
		w.Start()
		time.Sleep(5 * time.Minute)
		synctest.Wait()
		cl, cg := backoffVerdicts(start, w.CL.Requests()), backoffVerdicts(start, w.CG.Requests())
		n := min(len(cl), len(cg))
		if n < 10 {
			t.Fatalf("only %d attempts compared; the reset after 2 min is not covered", n)
		}
		w.Compare("backoff verdicts", cl[:n], cg[:n])
		for i, v := range cl[:n] {
			if v != "ok" {
				t.Errorf("cachelab wait %d: %s", i, v)
			}
		}
		w.Stop()
	})
}

// backoffVerdicts checks the gaps between requests against the rule.
func backoffVerdicts(start time.Time, reqs []dt.Request) []string {
	var out []string
	base, lastReset := 800*time.Millisecond, start
	for i := 1; i < len(reqs); i++ {
		drawn := reqs[i-1].At
		if drawn.Sub(lastReset) > 2*time.Minute {
			base, lastReset = 800*time.Millisecond, drawn
		}
		gap := reqs[i].At.Sub(drawn)
		v := "ok"
		if gap < base || gap >= 2*base {
			v = fmt.Sprintf("gap %v outside [%v, %v)", gap, base, 2*base)
		}
		out = append(out, v)
		base = min(2*base, 30*time.Second)
	}
	return out
}

// client-go: reflector.go startResync (F7): resync ticks call
// Store.Resync when ShouldResync allows, and a relist restarts the timer.
func TestResync(t *testing.T) {
	gone := &apierrors.NewResourceExpired("gone").ErrStatus
	var refuse atomic.Bool
	cfg := dt.ReflectorConfig{ResyncPeriod: 30 * time.Second, ShouldResync: func(string) bool { return !refuse.Load() }}
	run(t, cfg, func(w *dt.ReflectorWorld) {
		w.Create(pod("ns/a"))
		w.Start()
		w.Advance(30 * time.Second) // resync
		refuse.Store(true)
		w.Advance(30 * time.Second) // asked, refused
		refuse.Store(false)
		w.Advance(20 * time.Second)
		w.Both("break watches with 410", func(s *dt.Server) { s.BreakWatches(gone) })
		w.Settle()
		w.Advance(1600 * time.Millisecond) // relist at 81-82 s
		w.Advance(10 * time.Second)        // 91.6 s: the old timer would have fired at 90 s
		w.Advance(21 * time.Second)        // 112.6 s: the restarted timer fired
	}, "-- 30s later\nstore: Resync", "-- 10s later\nlast synced RV", "-- 21s later\nstore: Resync")
}
