package apistorage

import (
	"fmt"
	"reflect"
	"sync"
	"time"
	"unsafe"

	"k8s.io/apiserver/pkg/features"
	"k8s.io/apiserver/pkg/storage/cacher"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
)

// The wall clock in kube-apiserver's storage. The cacher's timers run on
// the Server's clock (Options.Clock), but a few of k8s.io/apiserver's
// loops wait on the wall clock whatever clock they are given. In a
// simulation only the scenario's clock is time: a loop that wakes after
// minutes of wall time would make what a run shows depend on how long a
// person read the screen at a --step prompt. Each is accounted for:
//
//   - The cache consistency checker (DetectCacheInconsistency, beta and
//     on by default since 1.34) compares the cache with etcd every 5 to
//     7.5 minutes of wall time (cacher/consistency, CheckPeriod); a check
//     that fails turns the cache's snapshots off, so the exact and paged
//     LISTs it served from them go to etcd (C8). It is
//     switched off here (disableWallClockChecks), as in a kube-apiserver
//     started with --feature-gates=DetectCacheInconsistency=false: left
//     on, a pause of five minutes put its goroutine in one of
//     apimachinery's wall-clock wait loops for good, which Quiescent
//     counts as work to come, and the next step could not settle.
//   - The cacher's dispatcher polls every 10 ms for the cache's first
//     LIST (New and WaitReady wait until it is past that poll), and the
//     cacher restarts a failed cache every second: Quiescent counts both
//     as work to come, rightly, since they wake whatever the scenario does.
//   - etcd sends progress notifications every 10 minutes on watches that
//     ask for them; kube-apiserver asks only on the cacher's own watch of
//     etcd, whose bookmarks the cacher never passes on (C1). The
//     informers' watches do not ask (listwatch, as kube-apiserver's etcd3
//     watcher), so nothing of it reaches them.
//   - The cacher closes a watcher that keeps its dispatcher waiting
//     longer than a budget of wall time (dispatchEvent and time_budget.go:
//     50 ms a second, at most 100 ms, none for a fresh cacher), C9. On a
//     busy machine an informer, or the cacher's own goroutine for its
//     watcher, is often that late behind a burst of writes: in 1 of about
//     5 runs of a 1,000-object bulk-create under `go test ./...`, one
//     side's watch was closed and the trace differed. The budget is 2 s
//     here, full from the start (widenDispatchBudget,
//     TestDispatcherWaitsForABehindWatcher, TestBurstIsNotCutByTheWallClock),
//     so only a reader starved for seconds would be cut. (A buffer in
//     Watch's relay, as a connection's, was tried first: with no back
//     pressure it let unread watches pile up events, and made listwatch's
//     differential tests five times slower.)
//   - The etcd3 store's size estimator refreshes its key count every 1 to
//     1.5 minutes; it changes no answer.

var wallClockChecks struct {
	once sync.Once
	err  error
}

// disableWallClockChecks switches off, process-wide, the feature gates of
// k8s.io/apiserver whose loops run on the wall clock and change what a
// client is answered (see above).
func disableWallClockChecks() error {
	wallClockChecks.once.Do(func() {
		err := utilfeature.DefaultMutableFeatureGate.SetFromMap(map[string]bool{string(features.DetectCacheInconsistency): false})
		if err != nil {
			wallClockChecks.err = fmt.Errorf("apistorage: switching off kube-apiserver's cache consistency checker: %w", err)
		}
	})
	return wallClockChecks.err
}

// dispatchBudget is the wall time the cacher's dispatcher waits for a
// watcher that cannot take an event at once before it closes it, in
// place of kube-apiserver's 100 ms (time_budget.go), and full from the
// cacher's start rather than empty. In a simulation every informer
// reads its watch, so a watcher keeps the dispatcher waiting only while
// the informer or the cacher's own goroutine for it is not scheduled: on
// a busy machine, tens of milliseconds. A watch that has just ended with
// a full buffer still costs this much once, and is closed as it would be.
const dispatchBudget = 2 * time.Second

// widenDispatchBudget sets c's dispatch budget to dispatchBudget. The
// budget is unexported (Cacher.dispatchTimeoutBudget, a *timeBudgetImpl),
// so it is set through reflect; a k8s.io/apiserver whose fields differ is
// an error here, not a silent return to the wall clock.
func widenDispatchBudget(c *cacher.Cacher) error {
	fail := func(what string) error {
		return fmt.Errorf("apistorage: cannot widen the watch cache's dispatch budget: %s (k8s.io/apiserver's cacher changed)", what)
	}
	f := reflect.ValueOf(c).Elem().FieldByName("dispatchTimeoutBudget")
	if !f.IsValid() || f.Kind() != reflect.Interface || f.IsNil() {
		return fail("no dispatchTimeoutBudget")
	}
	impl := f.Elem()
	if impl.Kind() != reflect.Pointer || impl.Elem().Kind() != reflect.Struct {
		return fail("dispatchTimeoutBudget is a " + impl.Type().String())
	}
	st := impl.Elem()
	addr := func(name string, t reflect.Type) unsafe.Pointer {
		v := st.FieldByName(name)
		if !v.IsValid() || v.Type() != t {
			return nil
		}
		return unsafe.Pointer(v.UnsafeAddr())
	}
	mu := (*sync.Mutex)(addr("Mutex", reflect.TypeFor[sync.Mutex]()))
	if mu == nil {
		return fail("no Mutex")
	}
	var durations []*time.Duration
	for _, name := range []string{"budget", "maxBudget", "refresh"} {
		p := (*time.Duration)(addr(name, reflect.TypeFor[time.Duration]()))
		if p == nil {
			return fail("no " + name)
		}
		durations = append(durations, p)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range durations {
		// refresh is budget gained per second: a budget spent is back
		// within a second.
		*p = dispatchBudget
	}
	return nil
}
