package apistorage

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cachelab/cachelab/internal/goroutines"
	"github.com/cachelab/cachelab/internal/testdeadline"
)

// A cache stopped while its dispatcher is behind stops: its reflector,
// blocked handing the dispatcher an event on a full queue, is drained
// first. Without drain, Cacher.Stop ended the dispatcher and then waited
// for ever for the reflector (a FuzzRunner run hung in its Close so, on a
// busy machine). Here the dispatcher is held behind deterministically, by
// the cacher's own lock, which it takes for every event, until Close is
// under way.
func TestStopDrainsTheReflector(t *testing.T) {
	for i := range 3 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			ctx := testdeadline.Context(t)
			s, create := cachedWorld(t, ctx)
			c := s.current()
			s.HoldCache()
			for i := range 250 {
				create(fmt.Sprintf("o%03d", i))
			}
			c.cacher.Lock() // the dispatcher waits for it at its next event
			s.ReleaseCache()
			waitUntil(t, "the reflector blocked on the dispatcher's full queue", func(g string) bool {
				return strings.Contains(g, "(*Cacher).processEvent(") && goroutines.State(g) == "chan send"
			})
			closed := make(chan struct{})
			go func() { s.Close(); close(closed) }()
			waitUntil(t, "Close under way: draining, or the cacher stopping", func(g string) bool {
				return strings.Contains(g, "apistorage.(*cache).drain(") ||
					strings.Contains(g, "(*Cacher).Stop(") && goroutines.State(g) == "sync.WaitGroup.Wait"
			})
			c.cacher.Unlock()
			select {
			case <-closed:
			case <-ctx.Done():
				t.Fatal("Close did not return by the test binary's deadline: the cacher's reflector is stuck handing over an event")
			}
		})
	}
}

// waitUntil waits until a goroutine matches. Only the test binary's
// deadline bounds the wait (package testdeadline): how long it takes
// grows with the machine's load.
func waitUntil(t *testing.T, what string, match func(g string) bool) {
	t.Helper()
	ctx := testdeadline.Context(t)
	for ctx.Err() == nil {
		for _, g := range goroutines.All() {
			if match(g) {
				return
			}
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("no goroutine shows %s by the test binary's deadline", what)
}
