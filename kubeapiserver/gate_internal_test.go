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
// lowest resourceVersion, the older watch's on a tie; a watch's own
// events keep their order (a watch-list's initial events are not in
// resourceVersion order).
func TestGateLetsTheLowestGoFirst(t *testing.T) {
	g := NewGate("controller")
	a, b := g.number(), g.number()
	held := map[*heldEvent]string{
		g.hold(a, event("9")): "a9",
		g.hold(a, event("3")): "a3", // after a9 in its watch: waits for it
		g.hold(b, event("5")): "b5",
		g.hold(b, event("9")): "b9",
		g.hold(b, watch.Event{Type: watch.Error}): "b-error",
	}
	var got []string
	for g.Next() {
		for h, name := range held {
			select {
			case <-h.go_:
				got = append(got, name)
				delete(held, h)
			default:
			}
		}
	}
	want := []string{"b5", "a9", "a3", "b9", "b-error"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the order the gate let events go (-want +got):\n%s", diff)
	}
	if g.holds("story") || !g.holds("controller") {
		t.Errorf("holds(story) = %v, holds(controller) = %v; want false, true", g.holds("story"), g.holds("controller"))
	}
}
