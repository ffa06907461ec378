package recording

import (
	"context"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	clocktesting "k8s.io/utils/clock/testing"
)

// testdata/gap.jsonl is a session with a gap: a list at rv 100, a
// change and a bookmark, a 410 at 3s, a LIST that got 429, then a list
// at rv 200 (b deleted and c created unseen) and a change after it.
func gapSession(t testing.TB) string {
	b, err := os.ReadFile("testdata/gap.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func gapServer(t *testing.T) (*Server, *clocktesting.FakeClock) {
	t.Helper()
	s, err := Read(strings.NewReader(gapSession(t)), "gap.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	h, err := NewHistory(s)
	if err != nil {
		t.Fatal(err)
	}
	clk := clocktesting.NewFakeClock(time.Unix(0, 0))
	return NewServer(h, clk), clk
}

// described is what a watch sent, as type key@rv.
func described(evs []watch.Event) []string {
	var out []string
	for _, ev := range evs {
		if st, ok := ev.Object.(*metav1.Status); ok {
			out = append(out, "ERROR "+string(rune('0'+st.Code/100))+"xx "+string(st.Reason))
			continue
		}
		u := ev.Object.(*unstructured.Unstructured)
		out = append(out, string(ev.Type)+" "+u.GetName()+"@"+u.GetResourceVersion())
	}
	return out
}

// take reads what w has sent until the server is quiet.
func take(t *testing.T, s *Server, w watch.Interface) []watch.Event {
	t.Helper()
	var out []watch.Event
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return out
			}
			out = append(out, ev)
		default:
			if s.Quiet() {
				return out
			}
			runtime.Gosched() // the watch's goroutine is on its way
		}
	}
}

func TestHistoryOfAGap(t *testing.T) {
	s, err := Read(strings.NewReader(gapSession(t)), "gap.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	h, err := NewHistory(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Segments) != 2 || h.Segments[0].RV != 100 || h.Segments[1].RV != 200 || h.Segments[1].At != 4500*time.Millisecond {
		t.Fatalf("segments: %+v", h.Segments)
	}
	if got, want := h.Failed, []Failure{{At: 3500 * time.Millisecond, Verb: "list", Code: 429, Text: "429 TooManyRequests: slow down", Line: 6}}; !cmp.Equal(got, want) {
		t.Errorf("failed: %v", cmp.Diff(want, got))
	}
	want := []time.Duration{0, time.Second, 2 * time.Second, 3 * time.Second, 4500 * time.Millisecond, 6 * time.Second}
	if got := h.Moments(); !cmp.Equal(got, want) {
		t.Errorf("moments: %v", cmp.Diff(want, got))
	}
	objs, ok := h.StateAtRV(101)
	if !ok || len(objs) != 2 || objs["ns0/a"]["metadata"].(map[string]any)["resourceVersion"] != "101" {
		t.Errorf("state at 101: %v %v", objs, ok)
	}
	if _, ok := h.StateAtRV(99); ok {
		t.Errorf("state at 99, before the recording: found")
	}
}

// A watch from the list's resourceVersion gets the changes at their
// moments (the bookmark only if asked for), then 410 at the recorded
// one; a watch from before the new segment gets 410 at once.
func TestServerWatch(t *testing.T) {
	s, clk := gapServer(t)
	ctx := context.Background()
	w, err := s.WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: "100", AllowWatchBookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := described(take(t, s, w)); len(got) != 0 {
		t.Errorf("at 0s: %v", got)
	}
	clk.Step(2 * time.Second)
	if got, want := described(take(t, s, w)), []string{"MODIFIED a@101", "BOOKMARK @105"}; !cmp.Equal(got, want) {
		t.Errorf("by 2s: %v", cmp.Diff(want, got))
	}
	clk.Step(time.Second)
	if got, want := described(take(t, s, w)), []string{"ERROR 4xx Expired"}; !cmp.Equal(got, want) {
		t.Errorf("at 3s: %v", cmp.Diff(want, got))
	}
	list, err := s.ListWithContext(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	ul := list.(*unstructured.UnstructuredList)
	if ul.GetResourceVersion() != "105" || len(ul.Items) != 1 || ul.GetContinue() == "" {
		t.Fatalf("a page at 3s: rv %s, %d items, continue %q", ul.GetResourceVersion(), len(ul.Items), ul.GetContinue())
	}
	next, err := s.ListWithContext(ctx, metav1.ListOptions{Limit: 1, Continue: ul.GetContinue()})
	if err != nil || next.(*unstructured.UnstructuredList).Items[0].GetName() != "b" {
		t.Fatalf("the next page: %v, %v", next, err)
	}
	clk.Step(1500 * time.Millisecond) // 4.5s: the second segment
	old, err := s.WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: "105"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := described(take(t, s, old)), []string{"ERROR 4xx Expired"}; !cmp.Equal(got, want) {
		t.Errorf("from 105 at 4.5s: %v", cmp.Diff(want, got))
	}
	wl, err := s.WatchWithContext(ctx, metav1.ListOptions{SendInitialEvents: ptr(true), AllowWatchBookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	clk.Step(1500 * time.Millisecond)
	if got, want := described(take(t, s, wl)), []string{"ADDED a@101", "ADDED c@150", "BOOKMARK @200", "ADDED d@201"}; !cmp.Equal(got, want) {
		t.Errorf("a watch-list at 4.5s: %v", cmp.Diff(want, got))
	}
	wl.Stop()
	w.Stop()
	old.Stop()
}

func ptr[T any](v T) *T { return &v }

// A session that reads, arranges as a history and is served never
// panics, whatever its lines.
func FuzzSession(f *testing.F) {
	f.Add(gapSession(f))
	f.Add(`{"kind":"session","at":"0s","version":1,"resource":"pods"}` + "\n" + `{"kind":"watch","at":"1s","watch":1,"sendInitialEvents":true}` + "\n" +
		`{"kind":"event","at":"1s","watch":1,"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"7","annotations":{"k8s.io/initial-events-end":"true"}}}}`)
	f.Add(gapSession(f)[:len(gapSession(f))-20]) // its last line cut short
	f.Add(`{"kind":"session","at":"0s","version":1,"resource":"pods"}` + "\n" + `{"kind":"watch","at":"1s","watch":1,"sendInitialEvents":true}` + "\n" +
		`{"kind":"event","at":"1s","watch":1,"type":"ADDED","object":{"metadata":{"name":"a\u001b[2J","resourceVersion":"5","labels":{"app":"x"}}}}` + "\n" +
		`{"kind":"event","at":"1s","watch":1,"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"7","annotations":{"k8s.io/initial-events-end":"true"}}}}` + "\n" +
		`{"kind":"event","at":"2s","watch":1,"type":"MODIFIED","object":{"metadata":{"name":"a\u001b[2J","resourceVersion":"9"}}}` + "\n" +
		`{"kind":"watch-end","at":"3s","watch":1}` + "\n" + `{"kind":"end","at":"3s"}`)
	f.Fuzz(func(t *testing.T, text string) {
		s, err := Read(strings.NewReader(text), "f.jsonl")
		if err != nil {
			return
		}
		h, err := NewHistory(s)
		if err != nil {
			return
		}
		clk := clocktesting.NewFakeClock(time.Unix(0, 0))
		srv := NewServer(h, clk)
		_, _ = srv.ListWithContext(context.Background(), metav1.ListOptions{Limit: 1})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		for _, at := range h.Moments() {
			clk.SetTime(time.Unix(0, 0).Add(at))
			w, err := srv.WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: "0", AllowWatchBookmarks: true})
			if err == nil {
				w.Stop()
			}
		}
	})
}
