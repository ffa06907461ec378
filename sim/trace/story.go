package trace

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
)

// --- an object's story ---
//
// The trace shows layers; a learner asks "what happened to ns0/a?". A
// story answers in sentences, one per event about the object, step by
// step, from etcd through the watch, the queue and the indexer to the
// handlers and the reconcile (issue 29).

// A StoryStep is what one step did to one object: the world's sentences
// (etcd's writes) and each side's.
type StoryStep struct {
	Index    int
	Cmd      string
	World    []string
	Cachelab []string
	ClientGo []string
}

// StoryOf is the part of a step's story about the object key, or false
// if the step did nothing to it; told is how the step's events are told
// (a Narrator's Step, which gives each sentence its cause). Each side's
// story keeps the layers that are compared (Compared): cachelab shows
// its queue's pops, which client-go's informer does not let anyone see,
// and a story told side by side says what can be compared.
func StoryOf(sr StepResult, told Told, key string) (StoryStep, bool) {
	st := StoryStep{Index: sr.Index, Cmd: sr.Cmd, World: about(sr.World, told[World], key),
		Cachelab: about(sr.Sides[Cachelab], told[Cachelab], key), ClientGo: about(sr.Sides[ClientGo], told[ClientGo], key)}
	return st, len(st.World)+len(st.Cachelab)+len(st.ClientGo) > 0
}

// QueueWorld reports whether a step was played in the queue world, where
// the simulator pops both queues itself and client-go's pops are shown.
func QueueWorld(sr StepResult) bool {
	return slices.ContainsFunc(sr.Sides[ClientGo], func(e Event) bool { return e.Layer == LayerPop })
}

// A Telling is how a story tells one event: a sentence about the event's
// own object, or, for an event that carries many objects at once (a
// queue's whole list, popped as one), a sentence in the story of each
// object its words name (Whole; Names says which).
type Telling struct {
	Sentence string
	Whole    bool
}

// Tell is how stories tell each of a step's events on one side (World,
// Cachelab or ClientGo): "" for an event that is not part of an object's
// journey, or that the other side could not show (a layer not Compared).
// A watch-list's initial objects are transformed twice: into the
// reflector's temporary store as they arrive (IntoTemporaryStore), then
// into the queue when the list is replayed. The text story (StoryOf) and
// the HTML page's both tell events this way.
func Tell(events []Event, side string, queueWorld bool) []Telling {
	temp := IntoTemporaryStore(events)
	out := make([]Telling, len(events))
	for i, e := range events {
		switch {
		case side != World && !Compared(e.Layer, queueWorld):
		case e.Kind == KindPop && e.Key == "":
			what := e.Op
			if what == "" { // the line's first word says it: "ReplacedAll {rv 3: ...}"
				what, _, _ = strings.Cut(e.Detail, " ")
			}
			out[i] = Telling{Sentence: "popped from the queue with the whole list, in a " + what, Whole: true}
		case e.Key == "":
		case temp != nil && temp[i]:
			out[i].Sentence = "transformed into the watch-list's temporary store at rv " + e.RV
		default:
			out[i].Sentence = Sentence(e)
		}
	}
	return out
}

// about is the sentences of told events that are about key.
func about(events []Event, told []Telling, key string) []string {
	var out []string
	for i, t := range told {
		if t.Sentence == "" {
			continue
		}
		if t.Whole && Names(events[i].Detail, key) || !t.Whole && events[i].Key == key {
			out = append(out, t.Sentence)
		}
	}
	return out
}

// IntoTemporaryStore marks which of one side's events in a step put a
// watch-list's initial object into the reflector's temporary store: the
// first transform of each object (at its resourceVersion) that arrived as
// an initial event. The second, when the list is replayed, goes into the
// queue. It is nil when there are none.
func IntoTemporaryStore(events []Event) []bool {
	var initial map[string]bool
	for _, e := range events {
		if e.Kind == KindEvent && e.Initial && e.Key != "" {
			if initial == nil {
				initial = map[string]bool{}
			}
			initial[e.Key+"@"+e.RV] = true
		}
	}
	if initial == nil {
		return nil
	}
	out := make([]bool, len(events))
	for i, e := range events {
		if id := e.Key + "@" + e.RV; e.Kind == KindEnqueue && initial[id] {
			out[i] = true
			delete(initial, id)
		}
	}
	return out
}

// Sentence says in words what event e did to its object, or "" for an
// event that is not part of an object's journey.
func Sentence(e Event) string {
	switch e.Kind {
	case KindWrite:
		switch e.Op {
		case "create":
			return "created in etcd at rv " + e.RV
		case "update":
			return "updated in etcd, rv " + e.PrevRV + " → " + e.RV
		case "delete":
			if rv := cmp.Or(e.PrevRV, e.RV); rv != "" {
				return "deleted from etcd (it was at rv " + rv + ")"
			}
			return "deleted from etcd"
		}
		return e.Op + " in etcd: " + e.Detail
	case KindEvent:
		s := fmt.Sprintf("watch %s delivered %s at rv %s", e.Watch, e.Op, e.RV)
		if e.Initial {
			s += " (one of a watch-list's initial events)"
		}
		return s
	case KindEnqueue:
		return "transformed into the queue at rv " + e.RV
	case KindPop:
		return "popped from the queue: " + e.Text()
	case KindSkip:
		return e.Detail
	case KindStore:
		switch e.Op {
		case "add":
			return "added to the indexer at rv " + e.RV
		case "update":
			return "updated in the indexer, rv " + e.PrevRV + " → " + e.RV
		case "delete":
			return "removed from the indexer (it was at rv " + e.PrevRV + ")"
		}
	case KindCall:
		return "handler " + e.Handler + ": " + strings.Join(strings.Fields(e.Text()), " ")
	case KindWorkqueue:
		return "workqueue: " + strings.Join(strings.Fields(e.Text()), " ")
	case KindReconcile:
		return "reconcile: " + e.Detail
	}
	return ""
}

// WriteStory writes key's story: for each step that did something to
// it, the step and its sentences. Where cachelab and client-go say the
// same, the sentences are written once; where they differ, each side's.
func WriteStory(w io.Writer, key string, steps []StoryStep) {
	var b strings.Builder
	writeStory(&b, key, steps)
	fmt.Fprint(w, EscapeLines(b.String())) // its sentences hold names: Escape
}

func writeStory(w io.Writer, key string, steps []StoryStep) {
	fmt.Fprintf(w, "\n── the story of %s (what each step did to it, from etcd to the handlers)\n", key)
	if len(steps) == 0 {
		fmt.Fprintf(w, "  no step did anything to %s\n", key)
		return
	}
	for _, st := range steps {
		fmt.Fprintf(w, "  step %d: %s\n", st.Index, st.Cmd)
		for _, s := range st.World {
			fmt.Fprintf(w, "      %s\n", s)
		}
		sentences := func(ss []string) {
			for _, s := range ss {
				fmt.Fprintf(w, "    → %s\n", s)
			}
		}
		if slices.Equal(st.Cachelab, st.ClientGo) {
			sentences(st.Cachelab)
			continue
		}
		fmt.Fprintf(w, "    [%s]\n", Cachelab)
		sentences(st.Cachelab)
		fmt.Fprintf(w, "    [%s]\n", ClientGo)
		sentences(st.ClientGo)
	}
}
