package trace

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// An object's story is told once where both sides say the same, and side
// by side where they differ; a layer only one side shows (cachelab's
// pops) is left out of both, and another object's events are not in it.
func TestStory(t *testing.T) {
	add := Event{Layer: LayerIndexer, Kind: KindStore, Op: "add", Key: "ns0/a", RV: "2", Detail: "ns0/a@2"}
	call := Event{Layer: "handler/h1", Kind: KindCall, Handler: "h1", Op: "OnAdd", Key: "ns0/a", RV: "2", Detail: "ns0/a@2"}
	pop := Event{Layer: LayerPop, Kind: KindPop, Op: "Added", Key: "ns0/a", RV: "2", Detail: "ns0/a@2"}
	other := Event{Layer: LayerIndexer, Kind: KindStore, Op: "add", Key: "ns0/b", RV: "3", Detail: "ns0/b@3"}
	write := Event{Layer: LayerEtcd, Kind: KindWrite, Op: "create", Key: "ns0/a", RV: "2"}
	same := StepResult{Index: 1, Cmd: "start", World: []Event{write},
		Sides: map[string][]Event{Cachelab: {pop, add, other, call}, ClientGo: {add, other, call}}}
	differ := StepResult{Index: 2, Cmd: "resync", Sides: map[string][]Event{Cachelab: {call}, ClientGo: {}}}
	none := StepResult{Index: 3, Cmd: "create ns0/b", Sides: map[string][]Event{Cachelab: {other}, ClientGo: {other}}}
	var steps []StoryStep
	n := NewNarrator(Header{})
	for _, sr := range []StepResult{same, differ, none} {
		if st, ok := StoryOf(sr, n.Step(sr, false), "ns0/a"); ok {
			steps = append(steps, st)
		}
	}
	var b strings.Builder
	WriteStory(&b, "ns0/a", steps)
	want := `
── the story of ns0/a (what each step did to it, from etcd to the handlers)
  step 1: start
      created in etcd at rv 2
    → added to the indexer at rv 2
    → handler h1: OnAdd ns0/a@2
  step 2: resync
    [cachelab]
    → handler h1: OnAdd ns0/a@2
    [client-go]
`
	if d := cmp.Diff(want, b.String()); d != "" {
		t.Errorf("the story (-want +got):\n%s", d)
	}
}
