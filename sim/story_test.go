package sim

import (
	"slices"
	"strings"
	"testing"

	"github.com/cachelab/cachelab/sim/trace"
	"github.com/cachelab/cachelab/sim/trace/htmlview"
)

// storiesTellCauses checks, for a scenario's run, that the objects'
// stories give the causes the trace shows (issue 47): every effect a
// relist or a resync makes, which no watch event of the object explains,
// says which relist or resync made it. Those are the sentences a learner
// cannot follow from the object's own lines: a tombstone, the removal
// that comes with it, an update that changes nothing, an update to a
// recreated object. (A scenario whose trace does not show such a cause
// would have to be named here: the story must not invent one.)
func storiesTellCauses(t *testing.T, r htmlview.Run) {
	t.Helper()
	queueWorld := slices.ContainsFunc(r.Steps, trace.QueueWorld)
	n := trace.NewNarrator(r.Header)
	for _, sr := range r.Steps {
		told := n.Step(sr, queueWorld)
		for _, side := range []string{trace.Cachelab, trace.ClientGo} {
			events := sr.Sides[side]
			tombstoned := map[string]bool{}
			for _, e := range events {
				if e.Kind == trace.KindCall && e.Order == trace.OrderTombstones {
					tombstoned[e.Key] = true
				}
			}
			for i, e := range events {
				s := told[side][i].Sentence
				if s == "" {
					continue
				}
				if need := needsCause(e, tombstoned); need != "" && !strings.HasPrefix(strings.TrimPrefix(s, need), ": ") {
					t.Errorf("step %d (%s), %s: %q says what, not why: its cause is in the trace", sr.Index, sr.Cmd, side, s)
				}
			}
		}
	}
}

// needsCause is the sentence's words that must be followed by its cause
// (": ..."), or "" if it needs none.
func needsCause(e trace.Event, tombstoned map[string]bool) string {
	switch {
	case e.Kind == trace.KindCall && e.Order == trace.OrderTombstones,
		e.Kind == trace.KindCall && strings.HasSuffix(e.Detail, trace.SameObjectMark),
		e.Kind == trace.KindCall && strings.HasSuffix(e.Detail, trace.NewObjectMark):
		return trace.Sentence(e)
	case e.Kind == trace.KindStore && e.Op == "delete" && tombstoned[e.Key]:
		return trace.Sentence(e)
	}
	return ""
}
