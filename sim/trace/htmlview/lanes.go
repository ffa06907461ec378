package htmlview

import (
	"slices"
	"strings"

	"github.com/cachelab/cachelab/sim/trace"
)

// lanes is the timeline's rows: the world's layers, then each layer of
// the implementations in the order a change travels (trace.Rank),
// handlers by name, several informers' lanes of a layer one after the
// other, and for each, cachelab's lane right above client-go's: one look
// down a step's column compares the two, where a half for each side put
// client-go's lane of a layer a screen below cachelab's (issue 47). A
// layer only cachelab's insides show (the reflector, pop, queue) is a
// lane of its own.
func lanes(steps, baseline []trace.StepResult) []lane {
	seen := map[lane]bool{}
	for _, sr := range baseline {
		for _, e := range sr.Sides[trace.Cachelab] {
			if compared(e) {
				seen[lane{WithoutFaults, e.Layer, e.Informer}] = true
			}
		}
	}
	for _, sr := range steps {
		for _, e := range sr.World {
			seen[lane{trace.World, e.Layer, ""}] = true
		}
		for _, impl := range []string{trace.Cachelab, trace.ClientGo} {
			for _, e := range sr.Sides[impl] {
				seen[lane{impl, e.Layer, e.Informer}] = true
			}
		}
	}
	out := make([]lane, 0, len(seen))
	for l := range seen {
		out = append(out, l)
	}
	implRank := map[string]int{trace.World: 0, trace.Cachelab: 1, trace.ClientGo: 2, WithoutFaults: 3}
	slices.SortFunc(out, func(a, b lane) int {
		if (a.Impl == trace.World) != (b.Impl == trace.World) {
			return implRank[a.Impl] - implRank[b.Impl]
		}
		if d := trace.Rank(a.Layer) - trace.Rank(b.Layer); d != 0 {
			return d
		}
		if d := strings.Compare(a.Layer, b.Layer); d != 0 {
			return d
		}
		if d := strings.Compare(a.Informer, b.Informer); d != 0 {
			return d
		}
		return implRank[a.Impl] - implRank[b.Impl]
	})
	return out
}
