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
	mu sync.Mutex
	// got holds the step's events in chunks that are never moved once
	// made: a step of a million events is copied once, by Take, not
	// again each time a slice outgrows its array.
	got    events
	total  int          // events ever recorded
	copied int          // events ever copied out (Entries, Take)
	kinds  map[Kind]int // events ever recorded, by kind
	// layers counts the events recorded since the last Take, by layer.
	layers map[string]int
	// listed is every object (key@rv) a watch-list brought as an initial
	// event since the last Take (Listed).
	listed map[string]bool
	// Tamper, in tests only, alters each event as it is recorded, to
	// prove that a difference is reported.
	Tamper func(*Event)
	// Informer, if set, is given to every event recorded (Event.Informer):
	// the recorder of one of several informers.
	Informer string
}

// Add records an event with only a layer, a kind and words.
func (r *Recorder) Add(layer string, kind Kind, key, detail string) {
	r.Record(Event{Layer: layer, Kind: kind, Key: key, Detail: detail})
}

// Record records an event (altered first by Tamper, if set).
func (r *Recorder) Record(e Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.insert(e, r.got.len())
}

// RecordBefore records e ahead of the last event recorded in its layer
// when jump says that event should come after it, and at the end
// otherwise: for two events of one instant that reach the recorder in
// either order, on two goroutines.
func (r *Recorder) RecordBefore(e Event, jump func(prev Event) bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	at := r.got.len()
	for i := at - 1; i >= 0; i-- {
		if prev := r.got.at(i); prev.Layer == e.Layer {
			if jump(*prev) {
				at = i
			}
			break
		}
	}
	r.insert(e, at)
}

// insert records e at index at of the step's events; r.mu is held.
func (r *Recorder) insert(e Event, at int) {
	if r.Informer != "" {
		e.Informer = r.Informer
	}
	if r.Tamper != nil {
		t := e // a copy, so that e itself does not escape to the heap with every event
		r.Tamper(&t)
		e = t
	}
	r.got.insert(e, at)
	r.total++
	if r.kinds == nil {
		r.kinds = map[Kind]int{}
	}
	r.kinds[e.Kind]++
	if r.layers == nil {
		r.layers = map[string]int{}
	}
	r.layers[e.Layer]++
	if e.Kind == KindEvent && e.Initial && e.Key != "" {
		if r.listed == nil {
			r.listed = map[string]bool{}
		}
		r.listed[e.Key+"@"+e.RV] = true
	}
}

// Listed reports whether a watch-list brought the object at key@rv as
// one of its initial events since the last Take. It costs the same
// however many events the step has: a controller asks it in every round
// of a step, thousands of rounds in a large one.
func (r *Recorder) Listed(keyAtRV string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.listed[keyAtRV]
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
	from := 0
	if r.got.len() > n {
		from = r.got.len() - n
		fmt.Fprintf(&b, "  ... %d earlier lines\n", from)
	}
	for i := from; i < r.got.len(); i++ {
		e := r.got.at(i)
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
	r.copied += r.got.len()
	return r.got.flat()
}

// Take returns the events recorded since the last Take, and forgets them.
func (r *Recorder) Take() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.copied += r.got.len()
	out := r.got.flat()
	r.got, r.layers, r.listed = events{}, nil, nil
	return out
}

// Copied is how many events were ever copied out of the recorder (by
// Entries and Take): each step's once when it is taken, and more only
// for a reader that looks at the step's events while it runs.
func (r *Recorder) Copied() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.copied
}

// TakeArranged is Arrange(Take()), without the copy between the two:
// the step's events, in layer order, and the recorder starts afresh.
func (r *Recorder) TakeArranged() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.copied += r.got.len()
	out := arrange(r.got.chunks)
	r.got, r.layers, r.listed = events{}, nil, nil
	return out
}

// events is a sequence of events kept in chunks. A chunk is twice the
// size of the one before it, up to maxChunk events, so a step of a few
// events allocates little and a large one never moves what it holds.
type events struct {
	chunks [][]Event
	n      int
}

const maxChunk = 4096

func (es *events) len() int { return es.n }

// at is the i-th event, in place. It looks from the end, where the
// recorder reads and inserts.
func (es *events) at(i int) *Event {
	start := es.n
	for k := len(es.chunks) - 1; k >= 0; k-- {
		c := es.chunks[k]
		if start -= len(c); i >= start {
			return &c[i-start]
		}
	}
	panic(fmt.Sprintf("trace: event %d of %d", i, es.n))
}

// insert puts e at index at, moving the events from at on one place
// later. Only the simulator's reordering of two events of one instant
// inserts before the end, and then at one of the last events.
func (es *events) insert(e Event, at int) {
	if len(es.chunks) == 0 || len(es.chunks[len(es.chunks)-1]) == cap(es.chunks[len(es.chunks)-1]) {
		size := 16
		if k := len(es.chunks); k > 0 {
			size = min(2*cap(es.chunks[k-1]), maxChunk)
		}
		es.chunks = append(es.chunks, make([]Event, 0, size))
	}
	last := &es.chunks[len(es.chunks)-1]
	*last = append(*last, e)
	es.n++
	if at == es.n-1 {
		return
	}
	for i := es.n - 1; i > at; i-- {
		*es.at(i) = *es.at(i - 1)
	}
	*es.at(at) = e
}

// flat returns the events in one new slice of their exact length.
func (es *events) flat() []Event {
	if es.n == 0 {
		return nil
	}
	out := make([]Event, 0, es.n)
	for _, c := range es.chunks {
		out = append(out, c...)
	}
	return out
}
