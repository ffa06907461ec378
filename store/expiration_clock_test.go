package store_test

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/tools/cache"
	testingclock "k8s.io/utils/clock/testing"

	. "github.com/cachelab/cachelab/internal/difftest"
	"github.com/cachelab/cachelab/store"
)

// The constructors without a clock stamp entries on the real clock. In a
// synctest bubble the real clock is the bubble's: it starts at midnight
// UTC on 2000-01-01 and moves only when every goroutine in the bubble is
// waiting, here in time.Sleep, which returns at once in real time. So the
// ages below are exact, and the test takes no time.

// client-go: expiration_cache.go NewTTLStore, NewExpirationStore (X4)
func TestRealClockConstructors(t *testing.T) {
	const ttl = 10 * time.Second
	cases := []struct {
		name   string
		cl, cg func() store.Store
		want   []string
	}{{
		name: "NewTTLStore",
		cl:   func() store.Store { return store.NewTTLStore(store.MetaNamespaceKeyFunc, ttl) },
		cg:   func() store.Store { return cache.NewTTLStore(cache.MetaNamespaceKeyFunc, ttl) },
		want: []string{"+10s: a/x@1", "+1ns: not found", "+100h0m0s: not found"},
	}, {
		// The policy's clock is an hour ahead of the one that stamps
		// entries: every entry is an hour old as it is written.
		name: "NewExpirationStore with a TTLPolicy on a clock ahead",
		cl: func() store.Store {
			return store.NewExpirationStore(store.MetaNamespaceKeyFunc, &store.TTLPolicy{TTL: ttl, Clock: testingclock.NewFakeClock(time.Now().Add(time.Hour))})
		},
		cg: func() store.Store {
			return cache.NewExpirationStore(cache.MetaNamespaceKeyFunc, &cache.TTLPolicy{TTL: ttl, Clock: testingclock.NewFakeClock(time.Now().Add(time.Hour))})
		},
		want: []string{"+10s: not found", "+1ns: not found", "+100h0m0s: not found"},
	}, {
		// ... or an hour behind, and standing still: nothing ever expires.
		name: "NewExpirationStore with a TTLPolicy on a clock behind",
		cl: func() store.Store {
			return store.NewExpirationStore(store.MetaNamespaceKeyFunc, &store.TTLPolicy{TTL: ttl, Clock: testingclock.NewFakeClock(time.Now().Add(-time.Hour))})
		},
		cg: func() store.Store {
			return cache.NewExpirationStore(cache.MetaNamespaceKeyFunc, &cache.TTLPolicy{TTL: ttl, Clock: testingclock.NewFakeClock(time.Now().Add(-time.Hour))})
		},
		want: []string{"+10s: a/x@1", "+1ns: a/x@1", "+100h0m0s: a/x@1"},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var a, b []string
			synctest.Test(t, func(t *testing.T) { a = readAfterSleeps(c.cl()) })
			synctest.Test(t, func(t *testing.T) { b = readAfterSleeps(c.cg()) })
			if d := cmp.Diff(b, a); d != "" {
				t.Fatalf("divergence from client-go (-client-go +cachelab):\n%s", d)
			}
			if d := cmp.Diff(c.want, a); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// readAfterSleeps adds a/x, then reads it back after each of three
// sleeps (of the bubble's clock).
func readAfterSleeps(s store.Store) []string {
	_ = s.Add(ex1)
	var out []string
	for _, d := range []time.Duration{10 * time.Second, time.Nanosecond, 100 * time.Hour} {
		time.Sleep(d)
		obj, ok, _ := s.GetByKey("a/x")
		got := "not found"
		if ok {
			got = Describe(obj)
		}
		out = append(out, fmt.Sprintf("+%v: %s", d, got))
	}
	return out
}

// client-go: expiration_cache_fakes.go NewFakeExpirationStore (X6): the
// store sends an expired key while the read that expired it waits, so an
// unbuffered channel holds the read until someone receives.
func TestFakeStoreReportsInsideTheRead(t *testing.T) {
	// NeverExpire is empty: every entry has expired.
	anyKey := func(any) (string, error) { return "", nil }
	sides := []struct {
		name string
		mk   func(ch chan<- string) store.Store
	}{
		{"cachelab", func(ch chan<- string) store.Store {
			return store.NewFakeExpirationStore(store.MetaNamespaceKeyFunc, ch, &store.FakeExpirationPolicy{RetrieveKeyFunc: anyKey}, testingclock.NewFakeClock(time.Time{}))
		}},
		{"client-go", func(ch chan<- string) store.Store {
			return cache.NewFakeExpirationStore(cache.MetaNamespaceKeyFunc, ch, &cache.FakeExpirationPolicy{RetrieveKeyFunc: anyKey}, testingclock.NewFakeClock(time.Time{}))
		}},
	}
	for _, side := range sides {
		t.Run(side.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ch := make(chan string) // unbuffered
				s := side.mk(ch)
				_ = s.Add(ex1)
				got := make(chan bool, 1)
				go func() { _, ok, _ := s.GetByKey("a/x"); got <- ok }()
				synctest.Wait() // the read is now blocked on its send
				select {
				case <-got:
					t.Fatal("GetByKey returned before its expired key was received")
				default:
				}
				if key := <-ch; key != "a/x" {
					t.Errorf("deleted key %q, want a/x", key)
				}
				if ok := <-got; ok {
					t.Error("GetByKey found an expired entry")
				}
			})
		})
	}
}
