package htmlview

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/cachelab/cachelab/sim/trace"
)

// Run is what a page shows: a run's header and its steps as the run gave
// them, and the divergence in the calls after the last step, if any.
type Run struct {
	Header trace.Header       `json:"header"`
	Steps  []trace.StepResult `json:"steps"`
	Late   *trace.Divergence  `json:"late,omitempty"`
	// Explored, for the page of one of cachelab explore's groups, says
	// what was explored (explored.go).
	Explored *Explored `json:"explored,omitempty"`
}

// view is the page's data, embedded as JSON and drawn by view.js. It is
// built to stay small at 10,000 objects: the events of one step in one
// lane are a cell, and each event is five numbers and strings in the
// cell's flat array, its words a shape shared by every event worded the
// same way but for its object (shapes).
type view struct {
	Header     trace.Header      `json:"header"`
	Steps      []viewStep        `json:"steps"`
	Lanes      []lane            `json:"lanes"`
	Objects    []string          `json:"objects"` // keys, sorted; an event names one by index
	UIDs       []string          `json:"uids"`    // in order of first appearance
	Shapes     []shape           `json:"shapes"`
	Cells      []cell            `json:"cells"`
	Faults     []fault           `json:"faults"`
	Divergence *trace.Divergence `json:"divergence,omitempty"` // the first
	Explored   *viewExplored     `json:"explored,omitempty"`
}

type viewStep struct {
	N     int    `json:"n"`
	Pos   string `json:"pos"`
	Cmd   string `json:"cmd"`
	Agree bool   `json:"agree"`
	// Label is the step's number as the page shows it, where that is not
	// N: on an explored group's page, the explored scenario's number, or
	// "+" for a fault explore put in.
	Label string `json:"label,omitempty"`
	// Seq is the order the step's events happened in, across lanes: runs
	// of [lane, count], the world's first, then cachelab's and client-go's.
	// A cell keeps its own lane's order; a story needs the step's (a
	// workqueue's get, the reconcile, the done).
	Seq []int `json:"q,omitempty"`
}

// lane is one row of the timeline: a layer of the world or of one
// implementation (each handler has its own).
type lane struct {
	Impl  string `json:"impl"`
	Layer string `json:"layer"`
	// Informer is the informer the lane's events happened in, when the
	// run has several (trace.Event.Informer): each has lanes of its own.
	Informer string `json:"informer,omitempty"`
}

// A cell holds the events of one step in one lane, in their trace order,
// five entries each: object (index into Objects, -1 for none), shape
// (index into Shapes), rv, prevRV, uid (index into UIDs, -1 for none).
type cell struct {
	Step int   `json:"s"`
	Lane int   `json:"l"`
	Ev   []any `json:"e"`
}

// cellStride is the number of entries an event takes in a cell.
const cellStride = 5

// A shape is everything about an event but its object: its kind and
// typed fields, its text with the object written as {k} (the key), {r}
// (key@rv) and {p} (key@prevRV), and the sentence an object's story tells
// of it (trace.Tell), written the same way, its bare resourceVersions as
// {rv} and {prv}. view.js puts them back; build checks that doing so gives
// the words back, and keeps them whole where not.
type shape struct {
	Kind    trace.Kind
	Op      string
	Watch   string
	Handler string
	Initial bool
	Order   trace.Order
	Text    string
	Story   string
	Whole   bool // the story tells it of every object its text names
}

// MarshalJSON writes a shape as an array: there are few, but every byte
// of the page counts at 10,000 objects.
func (s shape) MarshalJSON() ([]byte, error) {
	return json.Marshal([]any{s.Kind, s.Op, s.Watch, s.Handler, bit(s.Initial), s.Order, s.Text, s.Story, bit(s.Whole)})
}

func bit(b bool) int {
	if b {
		return 1
	}
	return 0
}

// builder gathers a view's tables as it walks the steps.
type builder struct {
	v      view
	lanes  map[lane]int
	objs   map[string]int
	uids   map[string]int
	shapes map[shape]int
	cells  map[[2]int]int
	// queueWorld: the run pops both queues itself, so its pops are told
	// in stories (trace.Tell).
	queueWorld bool
}

// build turns a run into the page's data. Its output depends only on the
// run: tables are sorted or in order of first appearance.
func build(r Run) view {
	// Every table is a list, empty or not: the page reads them all (a run
	// whose steps did nothing has no shapes and no cells).
	b := &builder{v: view{Header: r.Header, Objects: keys(r.Steps), UIDs: []string{}, Shapes: []shape{}, Cells: []cell{}}, lanes: map[lane]int{},
		objs: map[string]int{}, uids: map[string]int{}, shapes: map[shape]int{}, cells: map[[2]int]int{}}
	for i, k := range b.v.Objects {
		b.objs[k] = i
	}
	var baseline []trace.StepResult
	if r.Explored != nil {
		baseline = r.Explored.Baseline
	}
	b.v.Lanes = lanes(r.Steps, baseline)
	for i, l := range b.v.Lanes {
		b.lanes[l] = i
	}
	for _, sr := range r.Steps {
		b.queueWorld = b.queueWorld || trace.QueueWorld(sr)
	}
	narrator := trace.NewNarrator(r.Header)
	for _, sr := range r.Steps {
		st := viewStep{N: sr.Index, Pos: sr.Pos, Cmd: sr.Cmd, Agree: sr.Divergence == nil}
		told := narrator.Step(sr, b.queueWorld)
		st.Seq = b.add(sr.Index, trace.World, sr.World, told[trace.World], st.Seq)
		for _, impl := range []string{trace.Cachelab, trace.ClientGo} {
			st.Seq = b.add(sr.Index, impl, sr.Sides[impl], told[impl], st.Seq)
		}
		b.v.Steps = append(b.v.Steps, st)
		if sr.Divergence != nil && b.v.Divergence == nil {
			b.v.Divergence = sr.Divergence
		}
	}
	if d := r.Late; d != nil {
		b.v.Steps = append(b.v.Steps, viewStep{N: d.Step, Pos: d.Pos, Cmd: d.Cmd})
		if b.v.Divergence == nil {
			b.v.Divergence = d
		}
	}
	if b.v.Header.IDs == nil { // a scenario file that names none: [] for view.js, as in SCHEMA.md
		b.v.Header.IDs = []string{}
	}
	b.v.Faults = faults(r.Steps)
	b.explored(r)
	if b.v.Steps == nil {
		b.v.Steps = []viewStep{}
	}
	return b.v
}

// add puts a step's events of one side into their cells, each with how
// a story tells it (told: a trace.Narrator's), and their order across
// lanes on to seq.
func (b *builder) add(step int, impl string, events []trace.Event, told []trace.Telling, seq []int) []int {
	for i, e := range events {
		l := b.lanes[lane{impl, e.Layer, e.Informer}]
		c := b.cell(step, l)
		obj, uid := -1, -1
		if e.Key != "" {
			obj = b.objs[e.Key]
		}
		if e.UID != "" {
			uid = b.uid(e.UID)
		}
		c.Ev = append(c.Ev, obj, b.shape(e, told[i]), e.RV, e.PrevRV, uid)
		if n := len(seq); n > 0 && seq[n-2] == l {
			seq[n-1]++
		} else {
			seq = append(seq, l, 1)
		}
	}
	return seq
}

func (b *builder) cell(step, l int) *cell {
	return &b.v.Cells[intern(b.cells, &b.v.Cells, [2]int{step, l}, cell{Step: step, Lane: l})]
}

func (b *builder) uid(u string) int { return intern(b.uids, &b.v.UIDs, u, u) }

func (b *builder) shape(e trace.Event, t trace.Telling) int {
	s := shape{Kind: e.Kind, Op: e.Op, Watch: e.Watch, Handler: e.Handler, Initial: e.Initial, Order: e.Order,
		Text: wording(e), Story: telling(e, t), Whole: t.Whole}
	return intern(b.shapes, &b.v.Shapes, s, s)
}

// intern is k's index in list, where v is appended the first time k is
// seen: the tables of a view are in order of first appearance.
func intern[K comparable, V any](seen map[K]int, list *[]V, k K, v V) int {
	i, ok := seen[k]
	if !ok {
		i = len(*list)
		seen[k] = i
		*list = append(*list, v)
	}
	return i
}

// wording is an event's text with its object taken out (shape), or the
// text itself where putting the object back would not give it.
func wording(e trace.Event) string {
	e.Informer = "" // its lane says it
	return withoutObject(e.Text(), e, false)
}

// withoutObject is text about e with e's object taken out: key@rv as {r},
// key@prevRV as {p}, the key as {k}, and with numbers, each whole number
// that is the resourceVersion (or the one before) as {rv} ({prv}). It is
// the text itself where filling the template back in would not give it,
// or the text has braces of its own.
func withoutObject(text string, e trace.Event, numbered bool) string {
	if e.Key == "" || strings.ContainsAny(text, "{}") {
		return text
	}
	t := text
	if e.RV != "" {
		t = strings.ReplaceAll(t, e.Key+"@"+e.RV, "{r}")
	}
	if e.PrevRV != "" {
		t = strings.ReplaceAll(t, e.Key+"@"+e.PrevRV, "{p}")
	}
	t = strings.ReplaceAll(t, e.Key, "{k}")
	if numbered {
		t = numbers(t, e.RV, e.PrevRV)
	}
	if fill(t, e) != text {
		return text
	}
	return t
}

// fill puts an event's object back into a template: view.js does the
// same.
func fill(t string, e trace.Event) string {
	if !strings.Contains(t, "{") {
		return t
	}
	var b strings.Builder
	b.Grow(len(t) + 2*len(e.Key))
	for t != "" {
		i := strings.IndexByte(t, '{')
		if i < 0 {
			b.WriteString(t)
			break
		}
		b.WriteString(t[:i])
		t = t[i:]
		switch {
		case strings.HasPrefix(t, "{rv}"):
			b.WriteString(e.RV)
		case strings.HasPrefix(t, "{prv}"):
			b.WriteString(e.PrevRV)
		case strings.HasPrefix(t, "{r}"):
			b.WriteString(e.Key + "@" + e.RV)
		case strings.HasPrefix(t, "{p}"):
			b.WriteString(e.Key + "@" + e.PrevRV)
		case strings.HasPrefix(t, "{k}"):
			b.WriteString(e.Key)
		default:
			b.WriteByte('{')
			t = t[1:]
			continue
		}
		t = t[strings.IndexByte(t, '}')+1:]
	}
	return b.String()
}

// telling is the sentence a story tells of e with its object taken out,
// as wording does for its text, and each number that is its
// resourceVersion (or the one before) as {rv} ({prv}): "updated in etcd,
// rv {prv} → {rv}" is one shape for every object. A template is checked
// by filling it back in; where that would not give the sentence, the
// sentence is kept whole.
func telling(e trace.Event, t trace.Telling) string {
	if t.Whole {
		return t.Sentence
	}
	return withoutObject(t.Sentence, e, true)
}

// numbers writes each whole number in s (digits with no digit either
// side, and no letter before: the 3 of "w3" is a watch's name) that is
// rv as {rv}, and one that is prv as {prv}.
func numbers(s, rv, prv string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if !isDigit(s[i]) {
			b.WriteByte(s[i])
			i++
			continue
		}
		j := i
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		n := s[i:j]
		switch word := i == 0 || !isLetter(s[i-1]); {
		case word && n == rv:
			b.WriteString("{rv}")
		case word && n == prv:
			b.WriteString("{prv}")
		default:
			b.WriteString(n)
		}
		i = j
	}
	return b.String()
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// keys is every object key the run's events name, sorted.
func keys(steps []trace.StepResult) []string {
	seen := map[string]bool{}
	for _, sr := range steps {
		for _, events := range [][]trace.Event{sr.World, sr.Sides[trace.Cachelab], sr.Sides[trace.ClientGo]} {
			for _, e := range events {
				if e.Key != "" {
					seen[e.Key] = true
				}
			}
		}
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
