package trace

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWrap(t *testing.T) {
	for _, tc := range []struct {
		name  string
		text  string
		width int
		want  []string
	}{
		{"no width", "a b c", 0, []string{"a b c"}},
		{"fits", "a b c", 5, []string{"a b c"}},
		{"at a space", "OnAdd bulk/obj-1@2 (initial list)", 20, []string{"OnAdd bulk/obj-1@2", "(initial list)"}},
		{"never mid-word", "w1 ADDED averyveryverylongname@2 x", 10, []string{"w1 ADDED", "averyveryverylongname@2", "x"}},
		{"column spaces kept", "OnAdd    ns0/a@2 -> ns0/a@4 labels=app=api", 30, []string{"OnAdd    ns0/a@2 -> ns0/a@4", "labels=app=api"}},
		{"break drops the run", "aaaa    bbbb", 6, []string{"aaaa", "bbbb"}},
		{"runes, not bytes", "… 9,995 more watch lines", 12, []string{"… 9,995 more", "watch lines"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Wrap(tc.text, tc.width)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Wrap(%q, %d) (-want +got):\n%s", tc.text, tc.width, diff)
			}
			// Nothing is lost but the spaces lines were broken at.
			if strings.Join(strings.Fields(strings.Join(got, " ")), " ") != strings.Join(strings.Fields(tc.text), " ") {
				t.Errorf("Wrap(%q) lost words: %q", tc.text, got)
			}
		})
	}
}

// bulkCall is a handler call of h on bulk/obj-i.
func bulkCall(i int) Event {
	return Event{Layer: "handler/h", Kind: KindCall, Handler: "h", Op: "OnAdd", Key: fmt.Sprintf("bulk/obj-%03d", i), Detail: fmt.Sprintf("bulk/obj-%03d@%d", i, i+1)}
}

// relistUpdates are the no-op updates a relist gives a handler.
func relistUpdates(from, to int) []Event {
	var es []Event
	for i := from; i <= to; i++ {
		k := fmt.Sprintf("bulk/obj-%04d", i)
		es = append(es, Event{Layer: "handler/h", Kind: KindCall, Handler: "h", Op: "OnUpdate", Key: k, RV: fmt.Sprint(i + 1), PrevRV: fmt.Sprint(i + 1),
			Order: OrderSameObject, Detail: fmt.Sprintf("%s@%d -> %s@%d (same object: a resync or relist)", k, i+1, k, i+1)})
	}
	return es
}

// realUpdate is an update that changed the object.
// relistList is the ReplacedAll of a relist of objects from to to, object
// news at rv 5003 and every other where it was.
func relistList(from, to, news int) Event {
	return Event{Layer: LayerPop, Kind: KindPop, Op: "ReplacedAll", Detail: "{rv 5004: " + strings.Join(listWords(from, to, news), " ") + "}"}
}

func listWords(from, to, news int) []string {
	var w []string
	for i := from; i <= to; i++ {
		rv := fmt.Sprint(i + 1)
		if i == news {
			rv = "5003"
		}
		w = append(w, fmt.Sprintf("bulk/obj-%04d@%s", i, rv))
	}
	return w
}

func realUpdate(i int) Event {
	k := fmt.Sprintf("bulk/obj-%04d", i)
	return Event{Layer: "handler/h", Kind: KindCall, Handler: "h", Op: "OnUpdate", Key: k, RV: "5003", PrevRV: fmt.Sprint(i + 1),
		Detail: fmt.Sprintf("%s@%d -> %s@5003", k, i+1, k)}
}

// watchAdds are a watch-list's initial ADDED events.
func watchAdds(from, to int) []Event {
	var es []Event
	for i := from; i <= to; i++ {
		k := fmt.Sprintf("bulk/obj-%04d", i)
		es = append(es, Event{Layer: LayerWatch, Kind: KindEvent, Watch: "w1", Op: "ADDED", Key: k, RV: fmt.Sprint(i + 1), Initial: true,
			Detail: fmt.Sprintf("ADDED %s@%d", k, i+1)})
	}
	return es
}

var bookmark = Event{Layer: LayerWatch, Kind: KindEvent, Watch: "w1", Op: "BOOKMARK", RV: "13", Detail: "BOOKMARK rv 13 (initial events end)"}

// deletes are handler deletes of objects seen deleted.
func deletes(from, to int) []Event {
	var es []Event
	for i := from; i <= to; i++ {
		k := fmt.Sprintf("bulk/obj-%04d", i)
		es = append(es, Event{Layer: "handler/h", Kind: KindCall, Handler: "h", Op: "OnDelete", Key: k, RV: fmt.Sprint(i + 1), Detail: fmt.Sprintf("%s@%d", k, i+1)})
	}
	return es
}

// tombstone is a delete the informer missed.
func tombstone(i int) Event {
	k := fmt.Sprintf("bulk/obj-%04d", i)
	return Event{Layer: "handler/h", Kind: KindCall, Handler: "h", Op: "OnDelete", Key: k, Order: OrderTombstones,
		Detail: fmt.Sprintf("DeletedFinalStateUnknown{%s, last seen %s@%d}", k, k, i+1)}
}

// bulkCalls is bulkCall(from)..bulkCall(to).
func bulkCalls(from, to int) []Event {
	var es []Event
	for i := from; i <= to; i++ {
		es = append(es, bulkCall(i))
	}
	return es
}

func TestSummarize(t *testing.T) {
	synced := Event{Layer: LayerSynced, Kind: KindSynced, Detail: "informer HasSynced=true"}
	for _, tc := range []struct {
		name   string
		events []Event
		limit  int
		want   []string
	}{
		{"off", bulkCalls(1, 8), 0, texts(bulkCalls(1, 8))},
		{"at the limit", bulkCalls(1, 8), 8, texts(bulkCalls(1, 8))},
		{"over it", append(bulkCalls(1, 9), synced), 8, append(texts(bulkCalls(1, 5)),
			"… 4 more handler/h lines like these (4 objects)", synced.Text())},
		{"one object many times", append(bulkCalls(1, 5), bulkCall(6), bulkCall(6), bulkCall(6)), 7, append(texts(bulkCalls(1, 5)),
			"… 3 more handler/h lines like these (1 object)")},
		{"a small group stays whole", append(append(bulkCalls(1, 10), synced), synced), 8, append(texts(bulkCalls(1, 5)),
			"… 5 more handler/h lines like these (5 objects)", synced.Text(), synced.Text())},
		{"no objects", []Event{synced, synced, synced, synced, synced, synced, synced}, 6, append(texts([]Event{synced, synced, synced, synced, synced}),
			"… 2 more synced lines like these")},
		{"a long line", []Event{{Layer: LayerPop, Kind: KindPop, Op: "ReplacedAll", Detail: strings.Repeat("a ", 30) + "z"}}, 25,
			[]string{"ReplacedAll " + strings.TrimSpace(strings.Repeat("a ", 19)) + " … 12 more words"}},
		{"thousands", bulkCalls(1, 10005), 100, append(texts(bulkCalls(1, 5)), "… 10,000 more handler/h lines like these (10,000 objects)")},
		// Lines are alike only in shape: one real update among no-op
		// ones, a bookmark among ADDED events, a tombstone among deletes
		// each stay, where they happened (issue 29).
		{"one real update among no-op ones", append(append(relistUpdates(1, 7), realUpdate(43)), relistUpdates(8, 12)...), 10,
			append(texts(relistUpdates(1, 5)), "… 7 more handler/h lines like these (7 objects)", realUpdate(43).Text())},
		{"a bookmark ends the ADDED events", append(watchAdds(1, 12), bookmark), 10,
			append(texts(watchAdds(1, 5)), "… 7 more watch lines like these (7 objects)", bookmark.Text())},
		// A long line cut short keeps the words about the step's news.
		{"a relist's list keeps the object it brought news of", append([]Event{relistList(1, 60, 43)}, append(append(relistUpdates(1, 42), realUpdate(43)), relistUpdates(44, 60)...)...), 25,
			append(append([]string{"ReplacedAll {rv 5004: " + strings.Join(listWords(1, 17, 43), " ") + " … bulk/obj-0043@5003 … 42 more words"},
				texts(relistUpdates(1, 5))...), "… 54 more handler/h lines like these (54 objects)", realUpdate(43).Text())},
		{"a tombstone is never folded", append(append(deletes(1, 6), tombstone(7)), deletes(8, 12)...), 10,
			append(append(texts(deletes(1, 5)), "… 6 more handler/h lines like these (6 objects)"), tombstone(7).Text())},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, r := range summarize(tc.events, tc.limit) {
				got = append(got, r.text())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("summarize (-want +got):\n%s", diff)
			}
		})
	}
}

// texts is each event's text.
func texts(es []Event) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Text())
	}
	return out
}

// What a scenario file is compared with is every line, unwrapped, however
// the step is shown.
func TestStepOutputIsWhole(t *testing.T) {
	sr := StepResult{Index: 1, Cmd: "start", Sides: map[string][]Event{Cachelab: bulkCalls(1, 500)}}
	if got := strings.Count(StepOutput(sr), "\n"); got != 500 {
		t.Errorf("StepOutput has %d lines, want 500", got)
	}
	var b strings.Builder
	WriteStep(&b, sr, TextStyle{Impl: Cachelab, Summarize: 100})
	if got := strings.Count(b.String(), "\n"); got > 10 {
		t.Errorf("WriteStep summarized has %d lines, want at most 10:\n%s", got, b.String())
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -1000: "-1,000"} {
		if got := Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %q, want %q", n, got, want)
		}
	}
}
