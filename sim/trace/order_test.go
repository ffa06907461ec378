package trace

import (
	"strings"
	"testing"
)

// call is a handler call event, the tiny builder of these tests.
func call(op, key, rv string, order Order) Event {
	return Event{Layer: "handler/h1", Kind: KindCall, Handler: "h1", Op: op, Key: key, RV: rv, Detail: key + "@" + rv, Order: order}
}

var (
	tombB  = call("OnDelete", "ns/b", "", OrderTombstones)
	tombD  = call("OnDelete", "ns/d", "", OrderTombstones)
	listA  = call("OnUpdate", "ns/a", "2", OrderListed)
	listC  = call("OnAdd", "ns/c", "5", OrderListed)
	fixedE = call("OnAdd", "ns/e", "6", "")
	fixedF = call("OnAdd", "ns/f", "7", "")
)

func TestCompare(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b []Event
		same bool
	}{
		{"equal", []Event{tombB, tombD, listA, listC}, []Event{tombB, tombD, listA, listC}, true},
		{"order within a batch is free", []Event{tombB, tombD, listA, listC}, []Event{tombD, tombB, listC, listA}, true},
		{"the order of batches is not", []Event{tombB, tombD, listA, listC}, []Event{listA, listC, tombB, tombD}, false},
		{"a batch split by another is not the same", []Event{tombB, tombD, listA, listC}, []Event{tombB, listA, tombD, listC}, false},
		{"fixed places are compared exactly", []Event{fixedE, fixedF}, []Event{fixedF, fixedE}, false},
		{"a missing call", []Event{tombB, listA}, []Event{tombB}, false},
		{"a field that the text does not show", []Event{fixedE}, []Event{func() Event { e := fixedE; e.UID = "other"; return e }()}, false},
		{"uncompared layers are not compared", []Event{{Layer: LayerReflector, Detail: "x"}}, []Event{{Layer: LayerReflector, Detail: "y"}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			layer, d := Compare(tc.a, tc.b, false)
			if got := layer == ""; got != tc.same {
				t.Errorf("Compare: same=%t, want %t; layer %q diff:\n%s", got, tc.same, layer, d)
			}
			if !tc.same && (layer != "handler/h1" || d == "") {
				t.Errorf("Compare: layer %q, diff %q; want handler/h1 and a diff", layer, d)
			}
		})
	}
}

func TestAlign(t *testing.T) {
	a := []Event{tombB, tombD, listA, listC, {Layer: LayerReflector, Detail: "replace"}}
	b := []Event{{Layer: LayerReflector, Detail: "replace"}, tombD, tombB, listC, listA}
	got := Align(a, b, false)
	want := []string{"replace", "OnDelete ns/b@", "OnDelete ns/d@", "OnUpdate ns/a@2", "OnAdd    ns/c@5"}
	for i, e := range got {
		if e.Text() != want[i] {
			t.Fatalf("Align: event %d is %q, want %q (all: %v)", i, e.Text(), want[i], got)
		}
	}
	// Sides that differ are shown as they are.
	c := []Event{listA, listC, tombB, tombD}
	if got := Align(a, c, false); got[0].Key != "ns/a" {
		t.Errorf("Align of differing sides reordered them: %v", got)
	}
}

func TestMarkListed(t *testing.T) {
	es := []Event{
		{Layer: LayerWatch, Kind: KindEvent, Watch: "w1", Op: "ADDED", Key: "ns/a", RV: "2", Initial: true},
		{Layer: LayerWatch, Kind: KindEvent, Watch: "w1", Op: "MODIFIED", Key: "ns/a", RV: "3"},
		{Layer: LayerTransform, Kind: KindEnqueue, Key: "ns/a", RV: "2"},
		{Layer: LayerTransform, Kind: KindEnqueue, Key: "ns/a", RV: "3"},
		call("OnAdd", "ns/a", "2", OrderInitialList),
		call("OnDelete", "ns/b", "", OrderTombstones),
	}
	MarkListed(es)
	var got []string
	for _, e := range es {
		got = append(got, string(e.Order))
	}
	if want := ",,listed,,listed,tombstones"; strings.Join(got, ",") != want {
		t.Errorf("orders after MarkListed: %q, want %q", strings.Join(got, ","), want)
	}
}

// Two events alike in text but not in uid sort alike on both sides, so a
// batch holding both compares equal in either order.
func TestCompareBatchWithHiddenFields(t *testing.T) {
	x1, x2 := listA, listA
	x1.UID, x2.UID = "uid-1", "uid-2"
	if layer, d := Compare([]Event{x1, x2}, []Event{x2, x1}, false); layer != "" {
		t.Errorf("the same batch in two orders differs in %s:\n%s", layer, d)
	}
}

// RecordBefore puts an event ahead of the last one of its layer when
// asked to, and leaves other layers' events where they are.
func TestRecordBefore(t *testing.T) {
	var r Recorder
	r.Add(LayerPop, KindPop, "", "first")
	r.Add(LayerPop, KindPop, "", "bookmark")
	r.Add(LayerWatch, KindEvent, "", "a watch event")
	isBookmark := func(prev Event) bool { return prev.Detail == "bookmark" }
	r.RecordBefore(Event{Layer: LayerPop, Kind: KindPop, Detail: "syncall"}, isBookmark)
	r.RecordBefore(Event{Layer: LayerPop, Kind: KindPop, Detail: "last"}, func(Event) bool { return false })
	var got []string
	for _, e := range r.Take() {
		got = append(got, e.Detail)
	}
	want := []string{"first", "syncall", "bookmark", "a watch event", "last"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q, want %q", got, want)
	}
	if r.Count() != 5 || r.Counted(KindPop) != 4 {
		t.Errorf("counted %d events, %d pops; want 5 and 4", r.Count(), r.Counted(KindPop))
	}
}
