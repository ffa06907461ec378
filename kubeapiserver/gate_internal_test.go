package kubeapiserver

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
)

func event(rv string) watch.Event {
	u := &unstructured.Unstructured{}
	u.SetResourceVersion(rv)
	return watch.Event{Type: watch.Modified, Object: u}
}

// The gate lets go, of the first event each watch holds, the one at the
// lowest resourceVersion, on a tie the one whose watch watches what
// sorts first (not the older watch: the order of opening is a race); a
// watch's own
// events keep their order (a watch-list's initial events are not in
// resourceVersion order).
func TestGateLetsTheLowestGoFirst(t *testing.T) {
	g := NewGate("controller")
	a, b := g.number(false), g.number(false)
	held := map[*heldEvent]string{
		g.hold(a, "pods/ns1", event("9")):                     "a9",
		g.hold(a, "pods/ns1", event("3")):                     "a3", // after a9 in its watch: waits for it
		g.hold(b, "pods/ns0", event("5")):                     "b5",
		g.hold(b, "pods/ns0", event("9")):                     "b9", // a tie with a9, which watches ns1: b9 first
		g.hold(b, "pods/ns0", watch.Event{Type: watch.Error}): "b-error",
	}
	var got []string
	for {
		if _, ok := g.Next(); !ok {
			break
		}
		for h, name := range held {
			select {
			case <-h.go_:
				got = append(got, name)
				delete(held, h)
			default:
			}
		}
	}
	want := []string{"b5", "b9", "b-error", "a9", "a3"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the order the gate let events go (-want +got):\n%s", diff)
	}
	if g.holds("story") || !g.holds("controller") {
		t.Errorf("holds(story) = %v, holds(controller) = %v; want false, true", g.holds("story"), g.holds("controller"))
	}
}

// What the gate says of an event it lets go.
func TestGateSaysWhatItLetGo(t *testing.T) {
	g := NewGate("controller")
	u := &unstructured.Unstructured{}
	u.SetNamespace("ns0")
	u.SetName("a")
	u.SetResourceVersion("7")
	g.hold(g.number(false), "configmaps/ns0", watch.Event{Type: watch.Added, Object: u})
	got, ok := g.Next()
	if want := "ADDED configmaps ns0/a rv 7"; !ok || got.String() != want {
		t.Errorf("Next() = %q, %v; want %q, true", got, ok, want)
	}
}

// Listing counts the watches still sending their initial events: one
// opened with sendInitialEvents, until the gate lets go its bookmark
// that ends them, or it ends; never one opened without.
func TestGateCountsTheWatchesStillListing(t *testing.T) {
	g := NewGate("controller")
	a, b, c := g.number(true), g.number(true), g.number(false)
	if got := g.Listing(); got != 2 {
		t.Fatalf("Listing() = %d with two listing watches open, want 2", got)
	}
	end := &unstructured.Unstructured{}
	end.SetResourceVersion("5")
	end.SetAnnotations(map[string]string{"k8s.io/initial-events-end": "true"})
	other := &unstructured.Unstructured{}
	other.SetResourceVersion("4")
	g.hold(a, "pods/", event("3"))
	g.hold(a, "pods/", watch.Event{Type: watch.Bookmark, Object: other}) // a bookmark, not the end
	g.hold(a, "pods/", watch.Event{Type: watch.Bookmark, Object: end})
	g.hold(c, "pods/", watch.Event{Type: watch.Bookmark, Object: end.DeepCopy()})
	var got []int
	for {
		if _, ok := g.Next(); !ok {
			break
		}
		got = append(got, g.Listing())
	}
	// a3, a's bookmark at 4, then a's end at 5 and c's (which was not
	// listing) at 5, in the order of what they watch and then of opening.
	if want := []int{2, 2, 1, 1}; !cmp.Equal(want, got) {
		t.Errorf("Listing() after each event let go = %v, want %v", got, want)
	}
	g.ended(b)
	if got := g.Listing(); got != 0 {
		t.Errorf("Listing() = %d once the last listing watch ended, want 0", got)
	}
}
