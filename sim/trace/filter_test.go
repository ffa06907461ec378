package trace

import (
	"errors"
	"slices"
	"testing"
)

// --only takes layers by their base name or one handler's; anything else
// is an error that lists the valid ones.
func TestParseLayers(t *testing.T) {
	got, err := ParseLayers("watch, handler/h1,indexer")
	if want := []string{"watch", "handler/h1", "indexer"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("ParseLayers = %q, %v; want %q", got, err, want)
	}
	for _, bad := range []string{"watches", "watch,,indexer", "handlers/h1", "handler/", ""} {
		_, err := ParseLayers(bad)
		if !errors.Is(err, ErrUnknownLayer) {
			t.Errorf("ParseLayers(%q) = %v, want ErrUnknownLayer", bad, err)
		}
	}
	if _, err := ParseLayers("nope"); err == nil || err.Error() != `trace: unknown layer "nope": want one or more of etcd, cache, sim, log, `+
		`request, wire, watch, reflector, transform, pop, indexer, handler, synced, workqueue, reconcile, show, queue, note, or handler/<name>` {
		t.Errorf("the error does not list the layers: %v", err)
	}
}

func TestParseObject(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{{"ns0/a", true}, {"a", false}, {"/a", false}, {"ns0/", false}, {"ns0/a/b", false}, {"ns0/a@4", false}} {
		if _, err := ParseObject(tc.in); (err == nil) != tc.ok {
			t.Errorf("ParseObject(%q) = %v, want ok=%t", tc.in, err, tc.ok)
		}
	}
}

// --object keeps the object's events and those about no object in
// particular, unless they name only others.
func TestFilterObject(t *testing.T) {
	f := Filter{Object: "ns0/a"}
	for _, tc := range []struct {
		e    Event
		want bool
	}{
		{Event{Layer: LayerWatch, Key: "ns0/a", Detail: "MODIFIED ns0/a@4"}, true},
		{Event{Layer: LayerWatch, Key: "ns0/ab", Detail: "MODIFIED ns0/ab@4"}, false},
		{Event{Layer: LayerSim, Detail: "connection lost: watches dropped, new requests wait"}, true},
		{Event{Layer: LayerPop, Op: "ReplacedAll", Detail: "{rv 3: ns0/a@2 ns0/b@3}"}, true},
		{Event{Layer: LayerPop, Op: "ReplacedAll", Detail: "{rv 3: xns0/a@2 ns0/b@3}"}, false},
	} {
		if got := f.Keep(tc.e); got != tc.want {
			t.Errorf("Keep(%+v) = %t, want %t", tc.e, got, tc.want)
		}
	}
}

// --only handler keeps every handler's calls; handler/h1 only h1's.
func TestFilterLayers(t *testing.T) {
	sr := StepResult{World: []Event{{Layer: LayerEtcd}}, Sides: map[string][]Event{
		Cachelab: {{Layer: LayerWatch}, {Layer: HandlerLayer("h1")}, {Layer: HandlerLayer("h2")}},
	}}
	got := Filter{Layers: []string{"handler"}}.Step(sr)
	if len(got.World) != 0 || len(got.Sides[Cachelab]) != 2 {
		t.Errorf("--only handler kept %v and %v", got.World, got.Sides[Cachelab])
	}
	got = Filter{Layers: []string{"handler/h2", "etcd"}}.Step(sr)
	if len(got.World) != 1 || len(got.Sides[Cachelab]) != 1 || got.Sides[Cachelab][0].Layer != "handler/h2" {
		t.Errorf("--only handler/h2,etcd kept %v and %v", got.World, got.Sides[Cachelab])
	}
}
