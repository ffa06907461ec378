package trace

import (
	"slices"
	"sort"
	"strings"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/diff"
)

// Order names a batch of events whose order client-go leaves free: it
// makes them by ranging over a map, so any permutation of the batch is
// one client-go can produce. Events of a batch are adjacent in their
// layer. An event with no Order has a fixed place.
//
// A batch may be wider than client-go's freedom (a relist's unchanged
// objects come in the LIST's order, yet are marked OrderSameObject like a
// resync's); it is never narrower, so a valid client-go order is never
// reported as a difference.
type Order string

const (
	// OrderTombstones: a relist's deletes of objects it did not find,
	// from the cache's keys (RealFIFO and DeltaFIFO Replace, the
	// default stack's ReplacedAll).
	OrderTombstones Order = "tombstones"
	// OrderListed: a watch-list's objects, replayed from the reflector's
	// temporary store into the queue and on to the handlers.
	OrderListed Order = "listed"
	// OrderInitialList: initial-list adds, such as a late handler's
	// catch-up from the indexer.
	OrderInitialList Order = "initial list"
	// OrderSameObject: updates that change nothing: a resync's, from
	// the cache's objects.
	OrderSameObject Order = "same object"
	// OrderLog: log lines that come in map order.
	OrderLog Order = "log"
)

// MarkListed puts every event that carries one of a watch-list's initial
// objects on to the queue, out of it, or to a handler into OrderListed:
// the reflector replays them from a temporary store, in map order. The
// initial events themselves (the watch layer) keep their order, which
// the server fixes. Tombstones stay in their own batch.
func MarkListed(events []Event) {
	listed := map[string]bool{}
	for _, e := range events {
		if e.Kind == KindEvent && e.Initial && e.Key != "" {
			listed[e.Key+"@"+e.RV] = true
		}
	}
	if len(listed) == 0 {
		return
	}
	for i, e := range events {
		switch e.Kind {
		case KindEnqueue, KindPop, KindCall:
		default:
			continue
		}
		if e.Order != OrderTombstones && listed[e.Key+"@"+e.RV] {
			events[i].Order = OrderListed
		}
	}
}

// Arrange puts a step's events in layer order, keeping each layer's
// events in the order they happened, after marking a watch-list's replayed
// objects as a batch (MarkListed). Within the reflector layer a resync
// tick goes before a watch's end: the two can come at the same instant of
// the scenario's clock (a clock jump past both) on two goroutines. The
// events given are left as they are.
func Arrange(events []Event) []Event {
	return arrange([][]Event{events})
}

// arrange is Arrange over events given in chunks (the recorder's), which
// it reads once, so that a step's events are never copied whole before
// they are arranged.
func arrange(chunks [][]Event) []Event {
	n := 0
	for _, c := range chunks {
		n += len(c)
	}
	// Events of one place (rank, layer, resync) keep their order, and the
	// places are few: each event is moved once, straight to its place's
	// next slot, in one pass over a step that can number a million events
	// of some two hundred bytes each.
	type place struct {
		rank   int
		layer  string // "" where layers of one rank interleave
		resync bool   // a reflector's resync, which goes before a watch's end
	}
	var places []place
	ids := map[place]int32{}
	group := make([]int32, 0, n)
	lastLayer, lastID := "", int32(-1) // a layer's events come in runs: its place is looked up once a run
	for _, c := range chunks {
		for i := range c {
			e := &c[i]
			if lastID >= 0 && e.Layer == lastLayer && e.Layer != LayerReflector {
				group = append(group, lastID)
				continue
			}
			p := place{rank: printRank(e.Layer)}
			if p.rank != Rank(LayerWorkqueue) {
				p.layer = e.Layer
			}
			p.resync = e.Layer == LayerReflector && strings.HasPrefix(e.Detail, "resync")
			id, ok := ids[p]
			if !ok {
				id = int32(len(places))
				ids[p] = id
				places = append(places, p)
			}
			group = append(group, id)
			lastLayer, lastID = e.Layer, id
		}
	}
	order := make([]int32, len(places))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(i, j int32) int {
		a, b := places[i], places[j]
		if a.rank != b.rank {
			return a.rank - b.rank
		}
		if c := strings.Compare(a.layer, b.layer); c != 0 {
			return c
		}
		switch {
		case a.resync == b.resync:
			return 0
		case a.resync:
			return -1
		}
		return 1
	})
	count := make([]int, len(places))
	for _, g := range group {
		count[g]++
	}
	next := make([]int, len(places)) // where each place's next event goes
	at := 0
	for _, g := range order {
		next[g] = at
		at += count[g]
	}
	arranged := make([]Event, n)
	i := 0
	for _, c := range chunks {
		for j := range c {
			g := group[i]
			arranged[next[g]] = c[j]
			next[g]++
			i++
		}
	}
	MarkListed(arranged)
	return arranged
}

// Segment is a run of a layer's events: one event with a fixed place, or
// a batch whose order is free.
type Segment struct {
	Order  Order
	Events []Event
}

// Segments splits one layer's events into runs: each event with a fixed
// place on its own, each maximal run of one batch together.
func Segments(events []Event) []Segment {
	var out []Segment
	for _, e := range events {
		if n := len(out); e.Order != "" && n > 0 && out[n-1].Order == e.Order {
			out[n-1].Events = append(out[n-1].Events, e)
			continue
		}
		out = append(out, Segment{Order: e.Order, Events: []Event{e}})
	}
	return out
}

// Canonical is a layer's events with each free batch sorted (by key, then
// by text): two sides whose layers differ only within free batches have
// the same canonical form.
func Canonical(events []Event) []Event {
	if len(events) == 0 {
		return nil
	}
	out := make([]Event, 0, len(events))
	for _, s := range Segments(events) {
		if s.Order == "" || len(s.Events) == 1 {
			out = append(out, s.Events...)
			continue
		}
		for _, i := range sortedBatch(s.Events) {
			out = append(out, s.Events[i])
		}
	}
	return out
}

// sortedBatch is the order less puts a batch's events in, as indices:
// each event's text is made once, and the events, some two hundred bytes
// each, are not moved while they are sorted.
func sortedBatch(batch []Event) []int {
	texts := make([]string, len(batch))
	idx := make([]int, len(batch))
	for i := range batch {
		texts[i], idx[i] = batch[i].Text(), i
	}
	slices.SortStableFunc(idx, func(i, j int) int { return compareIn(batch[i], batch[j], texts[i], texts[j]) })
	return idx
}

// less orders a batch's events by key, then text, then the fields the
// text may not show, so that equal multisets sort alike.
func less(a, b Event) bool { return compareIn(a, b, a.Text(), b.Text()) < 0 }

// compareIn is less as a three-way comparison, given the events' texts.
func compareIn(a, b Event, ta, tb string) int {
	for _, f := range [...][2]string{{a.Key, b.Key}, {ta, tb}, {a.UID, b.UID}, {a.PrevRV, b.PrevRV},
		{a.RV, b.RV}, {a.Watch, b.Watch}, {a.Handler, b.Handler}, {a.Op, b.Op}, {string(a.Kind), string(b.Kind)}} {
		if c := strings.Compare(f[0], f[1]); c != 0 {
			return c
		}
	}
	switch {
	case a.Initial == b.Initial:
		return 0
	case !a.Initial:
		return -1
	}
	return 1
}

// ByLayer groups the compared layers' events, each layer in its own order.
// A layer whose events are adjacent (as Arrange leaves most) is a
// subslice of events, not a copy: a step can have a million events.
func ByLayer(events []Event, queueWorld bool) map[string][]Event {
	type span struct{ first, last, n int }
	spans := map[string]*span{}
	for i := range events {
		l := events[i].Layer
		if sp := spans[l]; sp != nil {
			sp.last, sp.n = i, sp.n+1
		} else if Compared(l, queueWorld) {
			spans[l] = &span{i, i, 1}
		}
	}
	m := make(map[string][]Event, len(spans))
	for l, sp := range spans {
		if sp.last-sp.first+1 == sp.n {
			m[l] = events[sp.first : sp.last+1 : sp.last+1]
			continue
		}
		layer := make([]Event, 0, sp.n)
		for _, e := range events[sp.first : sp.last+1] {
			if e.Layer == l {
				layer = append(layer, e)
			}
		}
		m[l] = layer
	}
	return m
}

// Compare compares the compared layers of two sides' events, in pipeline
// order: every fixed place exactly, every free batch as a multiset, and
// the sequence of places and batches exactly. It returns the first layer
// that differs and a unified diff of its lines (-a +b, a being cachelab's
// side), or "" if none does. Each event is looked at once while the two
// agree; only a layer that differs is sorted and rendered, for its diff.
func Compare(a, b []Event, queueWorld bool) (layer, d string) {
	la, lb := ByLayer(a, queueWorld), ByLayer(b, queueWorld)
	names := map[string]bool{}
	for l := range la {
		names[l] = true
	}
	for l := range lb {
		names[l] = true
	}
	sorted := make([]string, 0, len(names))
	for l := range names {
		sorted = append(sorted, l)
	}
	sort.Slice(sorted, func(i, j int) bool {
		if ri, rj := Rank(sorted[i]), Rank(sorted[j]); ri != rj {
			return ri < rj
		}
		return sorted[i] < sorted[j]
	})
	for _, l := range sorted {
		if sameUpToBatches(la[l], lb[l]) {
			continue
		}
		ca, cb := Canonical(la[l]), Canonical(lb[l])
		if d := diff.Diff("cachelab", lines(ca), "client-go", lines(cb)); len(d) > 0 {
			return l, string(d)
		}
		return l, cmp.Diff(ca, cb) // the same words, different fields
	}
	return "", ""
}

// sameUpToBatches reports whether two runs of one layer's events have the
// same canonical form (Canonical): the same places and batches in the
// same sequence, each fixed event equal, each batch the same multiset.
func sameUpToBatches(a, b []Event) bool {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		ei, ej := batchEnd(a, i), batchEnd(b, j)
		if ei-i != ej-j || a[i].Order != b[j].Order {
			return false
		}
		if !sameMultiset(a[i:ei], b[j:ej]) {
			return false
		}
		i, j = ei, ej
	}
	return i == len(a) && j == len(b)
}

// batchEnd is where the segment that starts at i ends (Segments).
func batchEnd(events []Event, i int) int {
	j := i + 1
	if events[i].Order != "" {
		for j < len(events) && events[j].Order == events[i].Order {
			j++
		}
	}
	return j
}

// sameMultiset reports whether two runs of equal length hold the same
// events, counted. Runs that are equal as they are (a fixed event, a
// batch in the same order on both sides) cost one pass.
func sameMultiset(a, b []Event) bool {
	if slices.Equal(a, b) {
		return true
	}
	if len(a) == 1 {
		return false
	}
	count := make(map[Event]int, len(a))
	for _, e := range a {
		count[e]++
	}
	for _, e := range b {
		if count[e] == 0 {
			return false
		}
		count[e]--
	}
	return true
}

// lines renders canonical events for a diff, one per line; an event in a
// free batch says so.
func lines(events []Event) []byte {
	var b strings.Builder
	for _, e := range events {
		b.WriteString(e.Text())
		if e.Order != "" {
			b.WriteString("   [any order within: " + string(e.Order) + "]")
		}
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// Align shows b's free batches in a's order where the two agree: when
// every compared layer of a and b is the same up to the order within free
// batches, it returns b with each batch's events in the order a has them,
// which is one order b's implementation could have produced. Otherwise it
// returns b as it is. Printing client-go's side aligned keeps a trace the
// same on every run; the comparison has already seen client-go's own order.
func Align(a, b []Event, queueWorld bool) []Event {
	if layer, _ := Compare(a, b, queueWorld); layer != "" {
		return b
	}
	return Realign(a, slices.Clone(b), queueWorld)
}

// Realign is Align for two sides already compared and found to agree
// (Compare returned ""): it does not compare them again, and it reorders
// b in place, which the step that owns b's events can afford and a copy
// of a million events cannot.
func Realign(a, b []Event, queueWorld bool) []Event {
	la := ByLayer(a, queueWorld)
	next := map[string]int{} // per layer: how many of a's events are placed
	out := b
	for i, e := range out {
		if !Compared(e.Layer, queueWorld) {
			continue
		}
		out[i] = la[e.Layer][next[e.Layer]]
		next[e.Layer]++
	}
	return out
}
