package listandwatch_test

import (
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/cachelab/cachelab/reflector"
)

// The classic start: LIST at RV "0", hand the items to Store.Replace,
// then WATCH from the list's RV; each watch event becomes one store call,
// and moves the last synced RV (F1, F3).
func ExampleReflector_ListAndWatch() {
	b := start(reflector.Options{}, "web")
	defer b.stop()
	follow(b, reflector.StepWatch)

	b.create("db")
	b.relabel("web", "2")
	b.remove("db")
	for range 3 {
		follow(b, reflector.StepEvent)
	}
	fmt.Println("-- the store was called:")
	fmt.Println(b.store.calls())
	fmt.Println("-- last synced RV:", b.r.LastSyncResourceVersion())
	// Output:
	// list            rv="0" limit=500
	// replace         1 object(s) at rv=2
	// watch           rv="2"
	// event           ADDED db@3
	// event           MODIFIED web@4
	// event           DELETED db@5
	// -- the store was called:
	// Replace([web@2], "2")
	// Add(db@3)
	// Update(web@4)
	// Delete(db@5)
	// -- last synced RV: 5
}

// Watch-list, client-go's default: one WATCH streams every object as
// ADDED into a temporary store, then a bookmark marks the end of the
// initial state; the store gets one Replace, and the same stream carries
// on with the changes (F1, F2).
func ExampleReflector_WatchList() {
	b := start(reflector.Options{UseWatchList: true}, "web", "db")
	defer b.stop()
	follow(b, reflector.StepReplace)

	b.create("cache")
	follow(b, reflector.StepEvent)
	fmt.Println("-- the store was called:")
	fmt.Println(b.store.calls())
	// Output:
	// watch-list      rv=""
	// event           ADDED db@3
	// event           ADDED web@2
	// event           BOOKMARK @3 (initial-events-end)
	// replace         2 object(s) at rv=3
	// event           ADDED cache@4
	// -- the store was called:
	// Replace([db@3 web@2], "3")
	// Add(cache@4)
}

// Two ways a watch can end with nothing wrong on the wire (F4): closed at
// once with no events, which looks like a server in trouble (relist, after
// a backoff); and closed normally later, as a watch timeout does (watch
// again at once, from the last synced RV).
func ExampleReflector_Watch() {
	b := start(reflector.Options{}, "web")
	defer b.stop()
	follow(b, reflector.StepWatch)
	<-b.opened

	fmt.Println("-- the server closes the watch at once, before any event")
	b.lw.DropWatches()
	follow(b, reflector.StepWatch)
	<-b.opened

	fmt.Println("-- a minute later, the server closes the watch")
	b.clock.Step(time.Minute)
	b.lw.DropWatches()
	follow(b, reflector.StepWatch)
	// Output:
	// list            rv="0" limit=500
	// replace         1 object(s) at rv=2
	// watch           rv="2"
	// -- the server closes the watch at once, before any event
	// watch-ended     very short watch (under 1s, no events)
	// relist-backoff  1.169s
	// list            rv="2"
	// replace         1 object(s) at rv=2
	// watch           rv="2"
	// -- a minute later, the server closes the watch
	// watch-ended     closed normally
	// watch           rv="2"
}

// 410 Gone: while the reflector is cut off, etcd compacts the history its
// watch would resume from. The watch ends with 410; the reflector relists
// from its last synced RV; this reflector pages its lists, which makes
// that an exact read at RV 2, gone too: 410 again, and the list is retried
// at once from RV "", the newest data (F4, F5).
func ExampleReflector_List() {
	b := start(reflector.Options{WatchListPageSize: 100}, "web")
	defer b.stop()
	follow(b, reflector.StepWatch)
	<-b.opened

	fmt.Println("-- the connection drops; while it is down, web changes, db is created, etcd compacts")
	b.lw.HoldWatches()
	b.clock.Step(time.Minute) // not a very short watch
	b.lw.DropWatches()
	follow(b, reflector.StepWatch)
	b.relabel("web", "2")
	b.create("db")
	b.compact()
	fmt.Println("-- the connection is back")
	b.lw.ReleaseWatches()
	follow(b, reflector.StepWatch)
	// Output:
	// list            rv="0" limit=100
	// replace         1 object(s) at rv=2
	// watch           rv="2"
	// -- the connection drops; while it is down, web changes, db is created, etcd compacts
	// watch-ended     closed normally
	// watch           rv="2"
	// -- the connection is back
	// watch-ended     410 Expired
	// relist-backoff  1.207s
	// list            rv="2" limit=100
	// rv-unavailable  410 Expired
	// list            rv="" limit=100
	// replace         2 object(s) at rv=4
	// watch           rv="4"
}

// The backoff between relists (F6): 0.8 s doubling to a 30 s cap, each
// wait stretched by a random factor in [1, 2), and back to the start at
// the first wait drawn more than 2 minutes after the last start, even if
// every attempt keeps failing.
func ExampleBackoff() {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	jitter := rand.New(rand.NewPCG(1, 2))
	backoff := reflector.NewBackoff(clk, jitter.Float64)
	start := clk.Now()
	for range 10 {
		wait := backoff.Next()
		fmt.Printf("at %7.3fs: wait %6.3fs\n", clk.Since(start).Seconds(), wait.Seconds())
		clk.Step(wait) // the attempt after the wait fails at once
	}
	// Output:
	// at   0.000s: wait  1.341s
	// at   1.341s: wait  2.338s
	// at   3.679s: wait  4.827s
	// at   8.507s: wait  9.151s
	// at  17.657s: wait 23.012s
	// at  40.669s: wait 35.542s
	// at  76.211s: wait 54.578s
	// at 130.790s: wait  1.071s
	// at 131.860s: wait  3.157s
	// at 135.017s: wait  4.101s
}

// Resync (F7): every ResyncPeriod on the reflector's clock, Store.Resync
// is called, if ShouldResync says so. Here it says no to the second tick.
func ExampleReflector_Resync() {
	var paused atomic.Bool
	b := start(reflector.Options{
		ResyncPeriod: 30 * time.Second,
		ShouldResync: func() bool { return !paused.Load() },
	}, "web")
	defer b.stop()
	follow(b, reflector.StepWatch)

	for tick := range 3 {
		<-b.waits // the resync timer is set
		paused.Store(tick == 1)
		b.clock.Step(30 * time.Second)
	}
	<-b.waits // the third tick was handled: the next timer is set
	fmt.Println("-- the store was called:")
	fmt.Println(b.store.calls())
	// Output:
	// list            rv="0" limit=500
	// replace         1 object(s) at rv=2
	// watch           rv="2"
	// -- the store was called:
	// Replace([web@2], "2")
	// Resync()
	// Resync()
}
