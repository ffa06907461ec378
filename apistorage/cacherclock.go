package apistorage

import (
	"reflect"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// cacherClock is the clock one watch cache gets: the server's, with two
// changes.
//
// The cacher's bookmark timer draws its period from [1 s, 1.25 s)
// (wait.Jitter(time.Second, 0.25)) from an unseeded source, so a clock
// step between the two would fire it in some runs and not in others. The
// period is pinned at 1 s.
//
// And it keeps the cacher's own timers apart. A simulation that moves its
// clock straight to the next moment something happens (an Excluder, such
// as internal/scenarioclock's) would stop every second for the bookmark
// timer, and every 15 s for the snapshot compactor's, though at most of
// those ticks the cacher does nothing a client can see. So each of the
// cacher's timers is excluded from the server's clock and noted here,
// with what it is for and when it fires, and NextWork says when the cache
// next does something: a bookmark due, a compaction etcd asked for, a
// wait that ends.
type cacherClock struct {
	clock.WithTicker

	mu     sync.Mutex
	timers []*cacherTimer
}

// An Excluder is a clock that can leave a timer or ticker it made out of
// the times it reports as due (internal/scenarioclock.Clock.Exclude).
type Excluder interface {
	Exclude(interface{ C() <-chan time.Time })
}

// What a cacher's timer is for, told by its period (cacher.go
// dispatchEvents, compactor.go compactorPollPeriod).
type timerRole int

const (
	roleOther     timerRole = iota // a wait that ends: its firing always matters
	roleBookmarks                  // dispatchEvents' tick: matters when a watch is due a bookmark
	roleCompactor                  // the snapshot compactor's poll: matters when etcd was compacted since
)

// compactorPeriod is the cacher's compactorPollPeriod.
const compactorPeriod = 15 * time.Second

func roleOf(d time.Duration) timerRole {
	switch {
	case d >= time.Second && d <= time.Second+time.Second/4:
		return roleBookmarks
	case d == compactorPeriod:
		return roleCompactor
	}
	return roleOther
}

// pin pins the bookmark timer's period.
func pin(d time.Duration) time.Duration {
	if roleOf(d) == roleBookmarks {
		return time.Second
	}
	return d
}

func (c *cacherClock) NewTimer(d time.Duration) clock.Timer {
	t := &cacherTimer{Timer: c.WithTicker.NewTimer(pin(d)), c: c, role: roleOf(d)}
	if ex, ok := c.WithTicker.(Excluder); ok {
		ex.Exclude(t.Timer)
	}
	t.arm(pin(d))
	c.keep(t)
	return t
}

// After is the watch cache's wait for a fresh read (3 s), kept like the
// other timers. Its goroutine (watch_cache.go waitUntilFreshLocked) lives
// until the time passes; on a kube-apiserver that is 3 s, here a
// scenario's clock may never move again, so release hands every wait
// still pending its time when the server closes
// (TestCloseEndsAFreshnessWait).
func (c *cacherClock) After(d time.Duration) <-chan time.Time {
	de, ok := c.WithTicker.(clock.WithDelayedExecution)
	if !ok {
		return c.NewTimer(d).C()
	}
	ch := make(chan time.Time, 1)
	at := c.Now().Add(d)
	t := &cacherTimer{c: c, role: roleOf(d), after: ch}
	t.Timer = de.AfterFunc(d, func() { ch <- at }) // on the goroutine moving the clock, which may hold its lock
	if ex, ok := c.WithTicker.(Excluder); ok {
		ex.Exclude(t.Timer)
	}
	t.arm(d)
	c.keep(t)
	return ch
}

// keep notes t, and forgets the Afters that have fired: one is made for
// every read that waits.
func (c *cacherClock) keep(t *cacherTimer) {
	now := c.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	kept := c.timers[:0]
	for _, x := range c.timers {
		if _, armed := x.due(now); armed || x.after == nil {
			kept = append(kept, x)
		}
	}
	clear(c.timers[len(kept):])
	c.timers = append(kept, t)
}

// release ends every After still waiting for its time, as if it had
// passed: the server is closing. A read still waiting wakes and, its time
// not up, waits again, as it would have.
func (c *cacherClock) release() {
	c.mu.Lock()
	timers := append([]*cacherTimer(nil), c.timers...)
	c.mu.Unlock()
	for _, t := range timers {
		if t.after != nil && t.Stop() {
			t.after <- t.at
		}
	}
}

// cacherTimer is one of the cacher's timers, with when it fires.
type cacherTimer struct {
	clock.Timer
	c     *cacherClock
	role  timerRole
	after chan time.Time // an After's channel (After)

	mu      sync.Mutex
	armed   bool
	at      time.Time // when it fires, while armed
	armedAt time.Time // the clock's time when it was armed
}

func (t *cacherTimer) arm(d time.Duration) {
	now := t.c.Now()
	t.mu.Lock()
	t.armed, t.at, t.armedAt = true, now.Add(d), now
	t.mu.Unlock()
}

func (t *cacherTimer) Reset(d time.Duration) bool {
	active := t.Timer.Reset(pin(d))
	t.arm(pin(d))
	return active
}

func (t *cacherTimer) Stop() bool {
	t.mu.Lock()
	t.armed = false
	t.mu.Unlock()
	return t.Timer.Stop()
}

// due reports when the timer fires next, if it has not fired: its time is
// after now, or it was armed to fire at the clock's next move (a reset to
// 0 at this very time).
func (t *cacherTimer) due(now time.Time) (time.Time, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.armed || !t.at.After(now) && t.armedAt.Before(now) {
		return time.Time{}, false
	}
	return t.at, true
}

// NextWork is the earliest time, on the server's clock, at which one of
// the running watch caches' own timers does something a client can see
// or a caller can wait for; ok is false when none will until something
// else happens (a request, a write, the clock moved for another reason).
// It assumes the cache is quiescent (Quiescent): a dispatch in progress
// may change it. A tick of the bookmark timer before that time sends no
// bookmark, and a tick of the compactor's changes nothing.
func (s *Server) NextWork() (at time.Time, ok bool) {
	c := s.current()
	if c == nil {
		return at, false
	}
	now := s.opts.Clock.Now()
	consider := func(t time.Time) {
		if !ok || t.Before(at) {
			at, ok = t, true
		}
	}
	if t, due := nextBookmark(c); due {
		consider(t)
	}
	compacted := s.compactor.CompactRevision() > c.feed.compactSeen()
	c.clock.mu.Lock()
	timers := append([]*cacherTimer(nil), c.clock.timers...)
	c.clock.mu.Unlock()
	for _, t := range timers {
		when, armed := t.due(now)
		switch {
		case !armed, t.role == roleBookmarks, t.role == roleCompactor && !compacted:
			continue
		}
		consider(when)
	}
	return at, ok
}

// nextBookmark is the earliest time a watch of the cache is due a
// bookmark (or was, and is stopped: the tick that pops it does nothing,
// which is harmless to stop at). The cacher keeps watches in one-second
// buckets counted from its creation (cacher.go watcherBookmarkTimeBuckets:
// a watch due at t goes to bucket ⌊(t - created) / 1 s⌋), and each tick
// of its bookmark timer pops every bucket up to ⌊(now - created) / 1 s⌋.
// Nothing it exports says which buckets are full, so they are read under
// the cacher's own lock, by reflection; TestNextWorkMatchesTheBookmarks
// holds this against the bookmarks a watch gets.
func nextBookmark(c *cache) (time.Time, bool) {
	cc := c.cacher
	cc.RLock()
	defer cc.RUnlock()
	v := reflect.ValueOf(cc).Elem()
	if v.FieldByName("expiredBookmarkWatchers").Len() > 0 {
		return c.created, true // popped and not yet requeued: a dispatch in progress
	}
	buckets := v.FieldByName("bookmarkWatchers").Elem()
	start := buckets.FieldByName("startBucketID").Int()
	first, found := int64(0), false
	for it := buckets.FieldByName("watchersBuckets").MapRange(); it.Next(); {
		if id := it.Key().Int(); it.Value().Len() > 0 && (!found || id < first) {
			first, found = id, true
		}
	}
	return c.created.Add(time.Duration(max(first, start)) * time.Second), found
}
