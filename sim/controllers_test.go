package sim

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/sim/trace"
)

// The controller's held calls are handed on in their order, except that
// each run of a batch client-go makes in map order (an initial list, a
// resync's same-object updates, a relist's tombstones) is sorted by key:
// one order of the batch, the same on both sides.
func TestHeldCallsCanonicalOrder(t *testing.T) {
	pod := func(name, rv string) *unstructured.Unstructured {
		u := examplePod()
		u.SetNamespace("ns0")
		u.SetName(name)
		u.SetResourceVersion(rv)
		u.SetUID(types.UID("uid-" + name))
		return u
	}
	var h heldCalls
	h.OnAdd(pod("c", "4"), true) // an initial list, in map order
	h.OnAdd(pod("a", "2"), true)
	h.OnAdd(pod("b", "3"), true)
	h.OnUpdate(pod("z", "5"), pod("z", "6")) // a change: fixed
	h.OnUpdate(pod("y", "7"), pod("y", "8"))
	h.OnUpdate(pod("b", "3"), pod("b", "3")) // a resync: free
	h.OnUpdate(pod("a", "2"), pod("a", "2"))
	h.OnDelete(cache.DeletedFinalStateUnknown{Key: "ns0/y", Obj: pod("y", "8")}) // a relist's tombstones: free
	h.OnDelete(cache.DeletedFinalStateUnknown{Key: "ns0/c", Obj: pod("c", "4")})
	h.OnDelete(pod("z", "6")) // a watch's delete: fixed
	var got []string
	for _, c := range h.take(func(string) bool { return false }) {
		got = append(got, c.op+" "+trace.KeyOf(c.obj))
	}
	want := []string{"add ns0/a", "add ns0/b", "add ns0/c", "update ns0/z", "update ns0/y", "update ns0/a", "update ns0/b",
		"delete ns0/c", "delete ns0/y", "delete ns0/z"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("order (-want +got):\n%s", d)
	}
	if n := h.calledTimes(); n != 10 {
		t.Errorf("calledTimes = %d, want 10", n)
	}
	if rest := h.take(func(string) bool { return false }); len(rest) != 0 {
		t.Errorf("take forgot nothing: %d calls left", len(rest))
	}

	// A watch-list's objects come in map order, changed or not: a relist
	// after a reconnect brings web changed and db unchanged, in either
	// order (found by cachelab explore: the changed one was held fixed).
	h.OnUpdate(pod("web", "2"), pod("web", "4"))
	h.OnUpdate(pod("db", "3"), pod("db", "3"))
	h.OnUpdate(pod("web", "4"), pod("web", "5")) // a watch event after the list: fixed
	got = nil
	for _, c := range h.take(func(k string) bool { return k == "ns0/web@4" || k == "ns0/db@3" }) {
		got = append(got, c.op+" "+trace.KeyOf(c.obj)+"@"+rvOf(c.obj))
	}
	if d := cmp.Diff([]string{"update ns0/db@3", "update ns0/web@4", "update ns0/web@5"}, got); d != "" {
		t.Errorf("a watch-list's objects (-want +got):\n%s", d)
	}
}
