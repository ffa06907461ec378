package explore

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cachelab/cachelab/sim/scenario"
	"github.com/cachelab/cachelab/sim/trace"
)

// A placement's story is what its run did differently from the run
// without faults, in the words a person would use: what the handlers were
// told (a tombstone, an update never delivered, an unchanged object
// delivered again, a step later), what a controller did, and, when the
// handlers saw nothing different, whether the informer relisted or only
// watched again. A divergence from client-go, or an invariant the run
// broke, is a story of its own, told first.

// Story labels, in the order they are joined.
const (
	storyNeverSeen = "an object is never seen (it came and went while the informer could not look)"
	storyTombstone = "a delete arrives as a tombstone"
	storyNoTomb    = "a delete arrives as an event, where the run without the fault gets a tombstone"
	storyLateAdd   = "an object is first seen at a later version"
	storyJumped    = "an update is jumped over (a relist brings a later version)"
	storyMissedDel = "a delete is never delivered"
	storyUnchanged = "an unchanged object is delivered again as an update"
	storyNoResend  = "a relist's (or a resync's) unchanged update does not come"
	storyBackwards = "an update goes back in time"
	storyOther     = "calls the run without the fault does not make"
	storyReconcile = "the controller reconciles differently"
	storyLater     = "the same calls, some at a later step"
	storyEarlier   = "the same calls, some at an earlier step"
	storyMoved     = "the same calls, some earlier and some later"
	storyRelisted  = "nothing visible to the handlers: the informer relisted"
	storyRewatched = "nothing visible to the handlers: the informer watched again"
	storyNothing   = "nothing visible"
)

var storyOrder = []string{storyNeverSeen, storyTombstone, storyNoTomb, storyLateAdd, storyJumped, storyMissedDel, storyUnchanged,
	storyNoResend, storyBackwards, storyOther, storyReconcile}

// The label of a story of its own, which names what it found after it.
const (
	storyDiverged = "client-go differs in layer "
	storyBroken   = "invariant broken: "
	storyFailed   = "the run failed: "
)

// Story is one thing a placement's run can tell: a key that stays the
// same (for scripts, and a record's "stories"), and the words the
// report uses, which may be reworded. A group's label joins the labels
// of its stories with "; ".
type Story struct {
	Key, Label string
	// Prefix says the label is the start of the group's: the story
	// names what it found after it (a layer, an invariant, an error).
	Prefix bool
}

// Stories are every story explore tells, in the order a group's label
// joins them; a divergence, a broken invariant and a run that could not
// go on come first, and are each a group of its own.
var Stories = []Story{
	{Key: "divergence", Label: storyDiverged, Prefix: true},
	{Key: "invariant-broken", Label: storyBroken, Prefix: true},
	{Key: "run-failed", Label: storyFailed, Prefix: true},
	{Key: "never-seen", Label: storyNeverSeen},
	{Key: "tombstone", Label: storyTombstone},
	{Key: "event-not-tombstone", Label: storyNoTomb},
	{Key: "first-seen-later", Label: storyLateAdd},
	{Key: "update-jumped", Label: storyJumped},
	{Key: "delete-never-delivered", Label: storyMissedDel},
	{Key: "unchanged-again", Label: storyUnchanged},
	{Key: "unchanged-not-again", Label: storyNoResend},
	{Key: "update-backwards", Label: storyBackwards},
	{Key: "other-calls", Label: storyOther},
	{Key: "reconciles-differ", Label: storyReconcile},
	{Key: "calls-later", Label: storyLater},
	{Key: "calls-earlier", Label: storyEarlier},
	{Key: "calls-moved", Label: storyMoved},
	{Key: "relisted", Label: storyRelisted},
	{Key: "watched-again", Label: storyRewatched},
	{Key: "nothing", Label: storyNothing},
}

// StoryKeys are the keys of the stories a group's label tells, in its
// order; a part it does not know is "unknown".
func StoryKeys(group string) []string {
	for _, st := range Stories {
		if st.Prefix && strings.HasPrefix(group, st.Label) {
			return []string{st.Key}
		}
	}
	var keys []string
	for _, part := range strings.Split(group, "; ") {
		key := "unknown"
		for _, st := range Stories {
			if !st.Prefix && st.Label == part {
				key = st.Key
				break
			}
		}
		keys = append(keys, key)
	}
	return keys
}

// call is a handler call as the story compares it.
type call struct {
	handler, op, key, rv, prevRV string
	tombstone                    bool
}

// runSummary is what a story reads from a run.
type runSummary struct {
	calls      map[call]int
	callSteps  []timedCall // each call and reconcile with the step it came in, in order
	reconciles map[string]int
	relists    int // Replace: a LIST or watch-list stored
	requests   int
	invariants []string
}

// timedCall is a handler call or a reconcile, and when it came: at is
// twice the scenario's step, plus one for a fault's or a heal's step
// after it ("5+"), so that two runs' times compare.
type timedCall struct {
	what string
	at   int
}

// summarize reads a run's steps; cmds, if not nil, are the placed
// commands they ran (the placement's faults among the scenario's steps),
// so that a call is placed by the scenario's step it came in, or just
// after it (a fault's or a heal's step: timedCall.at).
func summarize(steps []trace.StepResult, cmds []scenario.PlacedCmd) runSummary {
	s := runSummary{calls: map[call]int{}, reconciles: map[string]int{}}
	at, last := 0, 0
	for i, sr := range steps {
		switch {
		case cmds == nil:
			at = 2 * (i + 1)
		case cmds[i].Step > 0:
			last = cmds[i].Step
			at = 2 * last
		default:
			at = 2*last + 1
		}
		for _, e := range sr.Sides[trace.Cachelab] {
			switch {
			case e.Kind == trace.KindCall:
				c := call{e.Handler, e.Op, e.Key, e.RV, e.PrevRV, strings.HasPrefix(e.Detail, "DeletedFinalStateUnknown")}
				s.calls[c]++
				s.callSteps = append(s.callSteps, timedCall{fmt.Sprintf("%v", c), at})
			case e.Kind == trace.KindReconcile:
				s.reconciles[e.Handler+" "+e.Detail]++
				s.callSteps = append(s.callSteps, timedCall{"reconcile " + e.Handler + " " + e.Detail, at})
			case e.Kind == trace.KindReflector && strings.HasPrefix(e.Detail, "replace:"):
				s.relists++
			case e.Kind == trace.KindRequest && e.Op != "answer":
				s.requests++
			case e.Kind == trace.KindNote && strings.HasPrefix(e.Detail, "invariant: ") &&
				!strings.HasPrefix(e.Detail, "invariant: indexer not checked"):
				// (A check etcd cannot serve, past a compaction, is not a
				// promise broken.)
				s.invariants = append(s.invariants, strings.TrimPrefix(e.Detail, "invariant: "))
			}
		}
	}
	return s
}

// story names a placement's run (its steps, and its divergence if it
// diverged) against the run without faults (as many of its steps as the
// placement's hold): its label, and whether it is a divergence or a
// broken invariant.
func (ex *Exploration) story(steps []trace.StepResult, cmds []scenario.PlacedCmd, d *trace.Divergence, baseline []trace.StepResult) (label string, divergence, broken bool) {
	if d != nil {
		return storyDiverged + d.Layer, true, false
	}
	got, base := summarize(steps, cmds), summarize(baseline, nil)
	// A promise the run without the fault keeps and this one breaks. (A
	// scenario may break one on purpose, as etcd's time travel does:
	// the placements that break it too are its story, not a finding.)
	kept := map[string]bool{}
	for _, n := range base.invariants {
		kept[invariantKind(n)] = true
	}
	for _, n := range got.invariants {
		if k := invariantKind(n); !kept[k] {
			return storyBroken + k, false, true
		}
	}
	told := map[string]bool{}
	for key := range keysOf(base.calls, got.calls) {
		for _, l := range keyStory(callsOf(base.calls, key), callsOf(got.calls, key)) {
			told[l] = true
		}
	}
	told[storyReconcile] = !sameCounts(base.reconciles, got.reconciles)
	var labels []string
	for _, l := range storyOrder {
		if told[l] {
			labels = append(labels, l)
		}
	}
	if len(labels) > 0 {
		return strings.Join(labels, "; "), false, false
	}
	if l := moved(base.callSteps, got.callSteps); l != "" {
		return l, false, false
	}
	switch {
	case got.relists > base.relists:
		return storyRelisted, false, false
	case got.requests > base.requests:
		return storyRewatched, false, false
	}
	return storyNothing, false, false
}

// moved tells whether the same calls (and reconciles) came at other
// steps: each call's n-th time in one run is matched with its n-th time
// in the other. "" if every one came when it did without the fault.
func moved(base, got []timedCall) string {
	when := map[string][]int{}
	for _, c := range base {
		when[c.what] = append(when[c.what], c.at)
	}
	seen := map[string]int{}
	later, earlier := false, false
	for _, c := range got {
		i := seen[c.what]
		seen[c.what]++
		if i >= len(when[c.what]) {
			continue // a call the other stories are about
		}
		switch b := when[c.what][i]; {
		case c.at > b:
			later = true
		case c.at < b:
			earlier = true
		}
	}
	switch {
	case later && earlier:
		return storyMoved
	case later:
		return storyLater
	case earlier:
		return storyEarlier
	}
	return ""
}

// keysOf is every object key a call in a or b is about.
func keysOf(a, b map[call]int) map[string]bool {
	keys := map[string]bool{}
	for c := range a {
		keys[c.key] = true
	}
	for c := range b {
		keys[c.key] = true
	}
	return keys
}

func callsOf(cs map[call]int, key string) map[call]int {
	out := map[call]int{}
	for c, n := range cs {
		if c.key == key {
			out[c] = n
		}
	}
	return out
}

// keyStory is what happened to one object's calls: base without the
// fault, got with it.
func keyStory(base, got map[call]int) []string {
	if len(base) == 0 && len(got) == 0 {
		return nil
	}
	if len(got) == 0 {
		return []string{storyNeverSeen}
	}
	missing, extra := diffCalls(base, got)
	var out []string
	has := func(cs map[call]int, f func(call) bool) bool {
		for c := range cs {
			if f(c) {
				return true
			}
		}
		return false
	}
	tombstone := has(extra, func(c call) bool { return c.tombstone })
	if tombstone {
		out = append(out, storyTombstone)
	}
	plainDelete := has(missing, func(c call) bool { return c.tombstone }) && has(extra, func(c call) bool { return c.op == "OnDelete" && !c.tombstone })
	if plainDelete {
		out = append(out, storyNoTomb)
	}
	lateAdd := has(missing, func(c call) bool { return c.op == "OnAdd" }) && has(extra, func(c call) bool { return c.op == "OnAdd" })
	if lateAdd {
		out = append(out, storyLateAdd)
	}
	// (Updates a late add passes over are part of its story.)
	if !lateAdd && has(missing, func(c call) bool { return c.op == "OnUpdate" && c.rv != c.prevRV }) {
		out = append(out, storyJumped)
	}
	if has(missing, func(c call) bool { return c.op == "OnDelete" && !c.tombstone }) && !tombstone {
		out = append(out, storyMissedDel)
	}
	if has(extra, func(c call) bool { return c.op == "OnUpdate" && c.rv == c.prevRV }) {
		out = append(out, storyUnchanged)
	}
	if has(missing, func(c call) bool { return c.op == "OnUpdate" && c.rv == c.prevRV }) {
		out = append(out, storyNoResend)
	}
	if has(extra, func(c call) bool { return c.op == "OnUpdate" && older(c.rv, c.prevRV) }) {
		out = append(out, storyBackwards)
	}
	// What is left: an extra call none of the above explains (a jumped
	// update's replacement, a late add and a tombstone are explained).
	if has(extra, func(c call) bool {
		switch {
		case c.tombstone, c.op == "OnAdd" && lateAdd, c.op == "OnUpdate", c.op == "OnDelete" && plainDelete:
			return false
		}
		return true
	}) {
		out = append(out, storyOther)
	}
	return out
}

// diffCalls is what a has and b has not (missing), and the other way
// round (extra), counting repeats.
func diffCalls(a, b map[call]int) (missing, extra map[call]int) {
	missing, extra = map[call]int{}, map[call]int{}
	for c, n := range a {
		if d := n - b[c]; d > 0 {
			missing[c] = d
		}
	}
	for c, n := range b {
		if d := n - a[c]; d > 0 {
			extra[c] = d
		}
	}
	return missing, extra
}

func sameCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, n := range a {
		if b[k] != n {
			return false
		}
	}
	return true
}

// older reports whether resourceVersion rv is below prev (both numbers).
func older(rv, prev string) bool {
	a, errA := strconv.ParseInt(rv, 10, 64)
	b, errB := strconv.ParseInt(prev, 10, 64)
	return errA == nil && errB == nil && a < b
}

// invariantKind is an invariant note without its objects: what kind of
// promise was broken.
func invariantKind(note string) string {
	switch {
	case strings.Contains(note, "differs from etcd"):
		return "the indexer differs from etcd"
	case strings.Contains(note, "view differs from the indexer"):
		return "a handler's view differs from the indexer"
	case strings.HasPrefix(note, "handler "):
		return "a handler was told of a change it could not have seen"
	case strings.Contains(note, "not checked against etcd"):
		return "the indexer could not be checked against etcd"
	}
	return firstLine(note)
}
