package apistorage

import (
	"fmt"
	"strings"
	"sync"

	"k8s.io/apiserver/pkg/storage/cacher"

	"github.com/cachelab/cachelab/internal/goroutines"
)

// Quiescent reports whether the watch cache has nothing in flight: every
// goroutine running the cacher's code (its dispatcher, each watcher's
// sender, its consistency checker, ...) and every relay of this package's
// watches is parked waiting for a channel, a condition or a timer, none
// runnable and none in the middle of handing an event on.
//
// The cacher does some of its work on its own timers: about every second
// of its clock it sends bookmarks to the watchers that are due one (every
// minute, and just before a watch's deadline). When a simulation moves
// the clock, which watchers get a bookmark is the cacher's business, and
// nothing it exports says when it has sent them all. The goroutines say
// it: the runtime parks a goroutine in a select only when none of its
// channels is ready, and makes it runnable in the same step as a send to
// it; runtime.Stack takes all of them with the world stopped. So once
// these goroutines are all parked, no bookmark (and no event) is on its
// way, and none will be until something from outside (etcd, a request,
// the clock) wakes one. This is testing/synctest's "durably blocked",
// narrowed to the cacher, which synctest cannot host (etcd talks over
// real sockets).
func (s *Server) Quiescent() bool { return s.QuiescentIn(goroutines.All()) }

// QuiescentIn is Quiescent, read from a dump already taken
// (goroutines.All): a caller that asks several servers, or asks more of
// the same moment, takes one dump for all.
func (s *Server) QuiescentIn(all []string) bool {
	if s.current() == nil {
		return true
	}
	for _, g := range all {
		if !quietGoroutine(g) {
			return false
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for w := range s.watches {
		if w.handing.Load() {
			return false
		}
	}
	return true
}

// cacherCode and relayCode mark the goroutines Quiescent looks at: the
// cacher's, and the relays of this package's watches (which, parked in a
// select, wait either for the cacher's next event or, handing one over,
// for the client: Watch.handing tells the two apart).
//
// Over HTTP (package kubeapiserver), a relay of the same kind hands the
// storage's events to kube-apiserver's watch handler; it hands each over
// with a plain send, so that one with an event in hand is never parked
// in a select (WireRelayCode: kubeapiserver's tests hold it to the function).
const (
	cacherCode    = "k8s.io/apiserver/pkg/storage/cacher."
	relayCode     = "github.com/cachelab/cachelab/apistorage.(*Watch).relay"
	WireRelayCode = "github.com/cachelab/cachelab/kubeapiserver.(*counted).run"
)

// inFlight are frames of a goroutine that is handing something on: parked
// there, it waits for a receiver that will come.
var inFlight = []string{"sendWatchCacheEvent", "(*cacheWatcher).add(", "nonblockingAdd", "dispatchEvent("}

func quietGoroutine(g string) bool {
	header, frames, _ := strings.Cut(g, "\n")
	if !strings.Contains(frames, cacherCode) && !strings.Contains(frames, relayCode) && !strings.Contains(frames, WireRelayCode) {
		return true
	}
	switch goroutines.State(header) {
	case "select", "chan receive", "sync.Cond.Wait", "select (no cases)", "chan receive (nil chan)":
	default:
		return false // running, runnable, a syscall, a lock, a send
	}
	for _, f := range inFlight {
		if strings.Contains(frames, f) {
			return false
		}
	}
	// Parked in one of apimachinery's wait loops, it waits for the wall
	// clock, which will wake it whatever the scenario does. The cacher's
	// dispatcher polls every 10 ms of real time for the cache's first
	// LIST before it looks at its bookmark timer: a clock step taken
	// meanwhile is seen when the poll ends, before or after the next
	// step's watch registers (fuzz seed 299). Only a cache that has not
	// listed yet (held back from starting) keeps it polling for good.
	if strings.HasPrefix(frames, realTimeWait) {
		return firstListHeld(frames)
	}
	return true
}

// realTimeWait begins the innermost frame of a goroutine parked in one of
// apimachinery's poll or backoff loops, which tick on the wall clock.
const realTimeWait = "k8s.io/apimachinery/pkg/util/wait."

// dispatchers are the running cachers of the process, by the frame their
// dispatcher's goroutine runs: "(*Cacher).dispatchEvents(0x...)".
var dispatchers sync.Map // string -> *cacher.Cacher

func dispatcherFrame(c *cacher.Cacher) string {
	return fmt.Sprintf("(*Cacher).dispatchEvents(%p)", c)
}

// firstListHeld reports whether the goroutine whose frames these are is
// the dispatcher of a cache that has not listed etcd yet.
func firstListHeld(frames string) bool {
	held := false
	dispatchers.Range(func(frame, c any) bool {
		if strings.Contains(frames, frame.(string)) {
			held = !c.(*cacher.Cacher).Ready()
			return false
		}
		return true
	})
	return held
}

// dispatching reports whether c's dispatcher has begun its loop: from
// then on, a move of the clock reaches its bookmark timer, and only that.
func dispatching(c *cacher.Cacher) bool {
	frame := dispatcherFrame(c)
	for _, g := range goroutines.All() {
		_, frames, _ := strings.Cut(g, "\n")
		if strings.Contains(frames, frame) {
			return !strings.HasPrefix(frames, realTimeWait)
		}
	}
	return false
}

// Stalled reports whether every request in progress on these servers (a
// LIST, or a WATCH not yet open) waits in a cache for it to reach a
// resourceVersion: a consistent read, or a watch-list, while the cache is
// behind etcd (held). The cache gives each 3 s of its clock (then a LIST
// falls back to etcd, and a WATCH ends with "Too large resource
// version"): only the clock moving, or the cache catching up, moves them
// on. Other servers in the process (a test's, a fuzzer's other run) have
// requests of their own, which do not count (Waiting).
func Stalled(servers ...*Server) bool {
	var n int64
	for _, s := range servers {
		n += s.inflight.Load()
	}
	return n > 0 && int64(Waiting(goroutines.All(), servers...)) == n
}

// Waiting is how many requests to these servers wait in a cache for it
// to catch up (as Stalled says), counting only the goroutines of dump
// (goroutines.All). Given the goroutines of one client (those its pprof
// label marks: a request's goroutine inherits the label of the one that
// called the storage, or kube-apiserver's handler puts the client's on
// it), it is how many of that client's requests wait. A caller that
// must know whether one client's requests all wait cannot use Stalled:
// it says yes when another client's request waits while this one's is
// still on its way to the storage.
//
// A waiting request is a goroutine parked in the watch cache's wait with
// one of these servers' cache delegators (its address, the receiver of a
// frame; a restart's old one too) below it. The 3 s are counted by a
// goroutine the wait starts, which asks the clock for a timer and, when
// it fires, wakes the wait. Until that goroutine has run as far as the
// clock, a move of the clock passes it by: the timer it then sets is 3 s
// after the moved clock, and a caller that stops moving the clock at 3 s
// leaves the wait parked for good. So a request counts as waiting only
// once its timer goroutine is parked on the timer's channel. On a loaded
// machine that goroutine can be the last to run (watch_cache.go's
// waitUntilFreshLocked).
func Waiting(dump []string, servers ...*Server) int {
	var delegators []string
	for _, s := range servers {
		s.mu.Lock()
		delegators = append(delegators, s.delegators...)
		s.mu.Unlock()
	}
	timed := map[string]bool{} // waits whose timer goroutine is parked on the clock
	for _, g := range dump {
		_, frames, _ := strings.Cut(g, "\n")
		if goroutines.State(g) == "chan receive" && strings.HasPrefix(frames, waitTimer) {
			timed[goroutines.Parent(g)] = true
		}
	}
	waiting := 0
	for _, g := range dump {
		_, frames, _ := strings.Cut(g, "\n")
		if goroutines.State(g) != "sync.Cond.Wait" || !strings.Contains(frames, cacherCode+"(*watchCache).waitUntilFresh") {
			continue
		}
		if !timed[goroutines.ID(g)] {
			continue
		}
		for _, d := range delegators {
			if strings.Contains(frames, d) {
				waiting++
				break
			}
		}
	}
	return waiting
}

// waitTimer begins the frames of the goroutine a watch cache's wait
// starts to wake it after its 3 s.
const waitTimer = cacherCode + "(*watchCache).waitUntilFreshLocked.func"

// Stalled is Stalled(s).
func (s *Server) Stalled() bool { return Stalled(s) }
