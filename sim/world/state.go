package world

import (
	"fmt"
	"sort"
	"time"
)

// RewatchBackoff is a reflector starting a re-watch backoff of d (after
// a 429), which waits on the fake clock: the connection is parked until
// the clock reaches its end. Each side's clock says so once the
// reflector has asked it for the wait (sim's parkClock and stopClock).
// Parked any sooner (when the 429 was answered, or when the reflector
// traced the backoff), the side could settle before its reflector had
// asked, and a clock moved in between would leave the wait to the next
// move: the re-watch a step late, or never.
func (p *Conn) RewatchBackoff(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.parked, p.parkedUntil = true, p.clock.Now().Add(d)
}

// ParkedUntil is when cachelab's re-watch backoff on the scenario's clock
// ends (zero if it is not waiting one).
func (p *Conn) ParkedUntil() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.parked {
		return time.Time{}
	}
	return p.parkedUntil
}

// RelistBackoff is cachelab's reflector starting a relist backoff of d.
// It waits on the real clock, as client-go's does; settling counts the
// wait as progress, not as a step that is stuck.
func (p *Conn) RelistBackoff(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.backoffEnd, p.backoffDelay = time.Now().Add(d), d
	p.relists++
}

// Relists is how many relist backoffs cachelab's reflector has begun.
func (p *Conn) Relists() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.relists
}

// Backoff is the relist backoff cachelab's reflector last started: when
// it ends (real time), and how long it is.
func (p *Conn) Backoff() (time.Time, time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.backoffEnd, p.backoffDelay
}

func (p *Conn) setListing() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.listing = true
}

// Replaced is cachelab's reflector saying its Replace is done.
func (p *Conn) Replaced() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.listing = false
}

// State is what settling needs to know about a connection.
type State struct {
	Open, Waiting int   // open watches; calls held while disconnected or by a corrupt value
	Parked        bool  // waiting a re-watch backoff on the fake clock (after a 429)
	Listing       bool  // a LIST or watch-list was sent and cachelab has not reported its Replace
	AskedBookmark bool  // a bookmark a progress step asked for has not arrived
	Relaying      bool  // an event is between etcd and its trace line
	Unapplied     bool  // events handed over that cachelab has not reported applied
	Expiring      bool  // a watch's timeout has passed on the scenario's clock and it has not ended yet
	Calls         int   // LIST and WATCH calls in progress
	Taken         int64 // events taken from the server's open watches
	// Ending: an open watch has an ERROR event for the reflector. The
	// reflector stops a watch that sent one, then relists or watches
	// again: until it has stopped it, that is work on its way.
	Ending bool
}

func (p *Conn) State() State {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := State{Open: len(p.open), Waiting: p.waiting + p.stalled, Parked: p.parked, Listing: p.listing,
		AskedBookmark: p.showBooks > 0, Relaying: p.inRelay > 0, Unapplied: p.handed != p.handled, Calls: p.calls}
	now := p.clock.Now()
	for w := range p.open {
		c.Expiring = c.Expiring || !w.deadline.IsZero() && !now.Before(w.deadline)
		c.Taken += w.through
		c.Ending = c.Ending || w.errored
	}
	return c
}

// ProgressBlocker says why etcd would ignore a progress request on this
// connection now that it is at rev, or "" if every open watch will get a
// bookmark. etcd answers a progress request only when every watch on the
// client's stream has reached the revision it starts from (a watch opened
// at etcd's current revision starts at the next one, so it waits for a
// write), and a watch-list is not following etcd until its initial
// events are sent.
func (p *Conn) ProgressBlocker(rev int64) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.open) == 0 {
		return "no watch is open on the connection, so there is nobody to notify"
	}
	ws := make([]*connWatch, 0, len(p.open))
	for w := range p.open {
		ws = append(ws, w)
	}
	sort.Slice(ws, func(i, j int) bool { return ws[i].after < ws[j].after })
	for _, w := range ws {
		switch {
		case w.after < 0:
			return w.id + " is still sending its initial events and is not following etcd yet"
		case w.after >= rev:
			how, wait := "", "the next write"
			if w.resumed {
				how = " (etcd's client resumed it there after the restart)"
			}
			if w.after > rev {
				// etcd went back (a restore, a wipe): one write is not enough.
				wait = fmt.Sprintf("a write at rv %d", w.after+1)
			}
			return fmt.Sprintf("%s follows etcd from rv %d%s and etcd is at rv %d: etcd sends progress only once every watch "+
				"on a connection has reached the revision it starts at, so it waits for %s", w.id, w.after+1, how, rev, wait)
		}
	}
	return ""
}

// Resumed notes that etcd restarted at revision rev under the open
// watches. etcd's client resumes each watch from one past the newest
// revision it had a response for, and a settled watch had one for every
// write up to rev: one that followed etcd from before rev now follows it
// from rev+1, and etcd ignores progress requests until the next write.
func (p *Conn) Resumed(rev int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for w := range p.open {
		if w.after >= 0 && w.after < rev {
			w.after, w.resumed = rev, true
		}
	}
}

// Progress is signalled on every bookmark the informer takes.
func (p *Conn) Progress() <-chan struct{} { return p.progress }

// Unpark lets a reflector waiting a re-watch backoff on the scenario's
// clock count as moving again once the clock has reached until, when that
// backoff ends (cachelab's: client-go's cannot be seen, and draws from the
// same range); a zero until, at once.
func (p *Conn) Unpark(until time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if until.IsZero() || !p.clock.Now().Before(until) {
		p.parked = false
	}
}

// Delivered reports whether every event the server has handed to an open
// watch has gone through the connection (recorded, and handed to the
// reflector). Only a server that counts what it hands over can say
// (apistorage's Watch.Handed); for others it is true. An event the
// connection has just taken is between the two counts, where neither a
// parked server nor an idle connection shows it.
func (p *Conn) Delivered() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for w := range p.open {
		if h, ok := w.inner.(interface{ Handed() int64 }); ok && h.Handed() != w.through {
			return false
		}
	}
	return true
}
