package trace

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzEventsAsASlice holds the recorder's chunked events against a plain
// slice doing the same inserts: each byte of the input inserts one event,
// at the end or (a byte's low bits) a few places before it, as RecordBefore
// does. Long inputs cross several chunks.
func FuzzEventsAsASlice(f *testing.F) {
	f.Add([]byte{0, 0, 0, 1, 0, 2})
	f.Add(make([]byte, 5000))
	many := make([]byte, 9000)
	for i := range many {
		many[i] = byte(i * 7)
	}
	f.Add(many)
	f.Fuzz(func(t *testing.T, in []byte) {
		var es events
		var want []Event
		for i, b := range in {
			e := Event{Layer: fmt.Sprint(b % 3), Detail: fmt.Sprint(i)}
			at := len(want)
			if b >= 128 {
				at = max(0, at-int(b%4))
			}
			es.insert(e, at)
			want = append(want, Event{})
			copy(want[at+1:], want[at:])
			want[at] = e
			if es.len() != len(want) {
				t.Fatalf("after %d inserts: len %d, want %d", i+1, es.len(), len(want))
			}
		}
		if diff := cmp.Diff(want, es.flat()); diff != "" {
			t.Fatalf("events differ from the slice (-slice +events):\n%s", diff)
		}
		for i := range want {
			if *es.at(i) != want[i] {
				t.Fatalf("at(%d) = %v, want %v", i, *es.at(i), want[i])
			}
		}
	})
}

// TestRecordBeforeCrossesChunks: RecordBefore finds the last event of its
// layer behind thousands of others, across chunk boundaries.
func TestRecordBeforeCrossesChunks(t *testing.T) {
	var r Recorder
	r.Add("pop", KindPop, "", "first")
	for i := range 10000 {
		r.Add("watch", KindPop, "", fmt.Sprint(i))
	}
	r.RecordBefore(Event{Layer: "pop", Kind: KindPop, Detail: "before"}, func(prev Event) bool { return prev.Detail == "first" })
	got := r.Take()
	if len(got) != 10002 || got[0].Detail != "before" || got[1].Detail != "first" || got[10001].Detail != "9999" {
		t.Fatalf("got %d events, first %q %q, last %q", len(got), got[0].Detail, got[1].Detail, got[len(got)-1].Detail)
	}
	if again := r.Take(); again != nil {
		t.Fatalf("a second Take returned %d events", len(again))
	}
}

// A recorder of one of several informers names it in every event it
// records, and the text trace says it first; a named controller's lines
// say whose they are.
func TestRecorderNamesTheInformer(t *testing.T) {
	r := &Recorder{Informer: "a/pods"}
	r.Record(Event{Layer: LayerRequest, Kind: KindRequest, Op: "WATCH-LIST", Detail: "w1 WATCH-LIST rv=\"\""})
	r.Record(Event{Layer: LayerWorkqueue, Kind: KindWorkqueue, Op: "get", Key: "ns/web", Handler: "audit", Detail: "ns/web"})
	r.Record(Event{Layer: LayerReconcile, Kind: KindReconcile, Op: "reconcile", Key: "ns/web", Detail: "ns/web: read web@2 -> ok"})
	var got []string
	for _, e := range r.Take() {
		got = append(got, e.Informer+" | "+e.Text())
	}
	want := []string{
		`a/pods | a/pods: w1 WATCH-LIST rv=""`,
		`a/pods | a/pods: controller audit: get      ns/web`,
		`a/pods | a/pods: ns/web: read web@2 -> ok`,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}
