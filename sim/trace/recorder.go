package trace

import (
	"fmt"
	"maps"
	"strings"
	"sync"
)

// Recorder collects one side's events as they happen; Take hands over
// what a step produced. It is safe for concurrent use.
type Recorder struct {
	mu    sync.Mutex
	got   []Event
	total int          // events ever recorded
	kinds map[Kind]int // events ever recorded, by kind
	// layers counts the events recorded since the last Take, by layer.
	layers map[string]int
	// Tamper, in tests only, alters each event as it is recorded, to
	// prove that a difference is reported.
	Tamper func(*Event)
}

// Add records an event with only a layer, a kind and words.
func (r *Recorder) Add(layer string, kind Kind, key, detail string) {
	r.Record(Event{Layer: layer, Kind: kind, Key: key, Detail: detail})
}

// Record records an event (altered first by Tamper, if set).
func (r *Recorder) Record(e Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.insert(e, len(r.got))
}

// RecordBefore records e ahead of the last event recorded in its layer
// when jump says that event should come after it, and at the end
// otherwise: for two events of one instant that reach the recorder in
// either order, on two goroutines.
func (r *Recorder) RecordBefore(e Event, jump func(prev Event) bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	at := len(r.got)
	for i := len(r.got) - 1; i >= 0; i-- {
		if r.got[i].Layer == e.Layer {
			if jump(r.got[i]) {
				at = i
			}
			break
		}
	}
	r.insert(e, at)
}

// insert records e at index at of the step's events; r.mu is held.
func (r *Recorder) insert(e Event, at int) {
	if r.Tamper != nil {
		r.Tamper(&e)
	}
	r.got = append(r.got, Event{})
	copy(r.got[at+1:], r.got[at:])
	r.got[at] = e
	r.total++
	if r.kinds == nil {
		r.kinds = map[Kind]int{}
	}
	r.kinds[e.Kind]++
	if r.layers == nil {
		r.layers = map[string]int{}
	}
	r.layers[e.Layer]++
}

// SameCounts reports whether two recorders have recorded as many events
// in each compared layer since their last Take. Events are only ever
// added, so two sides whose counts are equal now either agree now, or
// never will: settling waits on it, and the comparison that follows
// looks at what the events are.
func SameCounts(a, b *Recorder, queueWorld bool) bool {
	a.mu.Lock()
	ca := maps.Clone(a.layers)
	a.mu.Unlock()
	b.mu.Lock()
	defer b.mu.Unlock()
	for l, n := range ca {
		if Compared(l, queueWorld) && b.layers[l] != n {
			return false
		}
	}
	for l, n := range b.layers {
		if Compared(l, queueWorld) && ca[l] != n {
			return false
		}
	}
	return true
}

// Counted is how many events of kind k were ever recorded: a progress
// line reads it while a step runs.
func (r *Recorder) Counted(k Kind) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.kinds[k]
}

// Count is how many events were ever recorded: settling counts a new one
// as progress.
func (r *Recorder) Count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.total
}

// Peek returns the last n events the current step has recorded so far, as
// text, each cut to a screen's width: enough to see where a step got to,
// never megabytes.
func (r *Recorder) Peek(n int) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	got := r.got
	if len(got) > n {
		fmt.Fprintf(&b, "  ... %d earlier lines\n", len(got)-n)
		got = got[len(got)-n:]
	}
	for _, e := range got {
		fmt.Fprintf(&b, "  %-16s %s\n", e.Layer, Clip(e.Text(), 120))
	}
	return b.String()
}

// Clip cuts text to at most n runes, saying so.
func Clip(text string, n int) string {
	if r := []rune(text); len(r) > n {
		return string(r[:n]) + " ..."
	}
	return text
}

// Entries returns the events the current step has recorded so far,
// leaving them in place.
func (r *Recorder) Entries() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.got...)
}

// Take returns the events recorded since the last Take, and forgets them.
func (r *Recorder) Take() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.got
	r.got, r.layers = nil, nil
	return out
}
