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
	a, b := g.number(), g.number()
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
	g.hold(g.number(), "configmaps/ns0", watch.Event{Type: watch.Added, Object: u})
	got, ok := g.Next()
	if want := "ADDED configmaps ns0/a rv 7"; !ok || got.String() != want {
		t.Errorf("Next() = %q, %v; want %q, true", got, ok, want)
	}
}
