package mermaid

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cachelab/cachelab/sim/scenario"
	"github.com/cachelab/cachelab/sim/trace"
)

// Mermaid's defaults, which GitHub renders with: the longest diagram text
// it accepts, and the most edges a graph may have
// (https://mermaid.js.org/config/schema-docs/config.html, maxTextSize and
// maxEdges).
const (
	MaxTextSize = 50000
	MaxEdges    = 500
)

// Budget is what Render keeps a diagram under.
type Budget struct {
	Chars    int // bytes of text: a bound on mermaid's count of UTF-16 units
	Messages int // arrows
}

// DefaultBudget leaves a margin under mermaid's limits.
var DefaultBudget = Budget{Chars: 40000, Messages: 400}

// Run is what a diagram is drawn from: a run's header and the results of
// the steps that ran.
type Run struct {
	Header trace.Header
	Steps  []trace.StepResult
	// Late is a divergence in the handler calls after the last step.
	Late *trace.Divergence
	// Failure, if not "", is why the run stopped early: the last note.
	Failure string
}

// Options says what to draw.
type Options struct {
	// Filter picks the events drawn (--only, --object).
	Filter trace.Filter
	// Budget is the size to stay under; the zero Budget is DefaultBudget.
	Budget Budget
}

// Render draws r as a Mermaid sequence diagram, under o.Budget. The same
// run and options give the same bytes.
func Render(r Run, o Options) string {
	if o.Budget == (Budget{}) {
		o.Budget = DefaultBudget
	}
	d := newDiagram(r, o.Filter)
	// All events a step, then fewer and fewer until the diagram fits.
	for _, perStep := range []int{-1, 12, 6, 3, 1, 0} {
		if text, ok := d.layout(perStep, o.Budget); ok {
			return text
		}
	}
	text, _ := d.layout(0, o.Budget) // cut at the last step that fits
	return text
}

// diagram is a run as participants and steps, ready to lay out.
type diagram struct {
	header  []string // comment lines
	parts   []participant
	steps   []block
	tail    []line // after the last step: the late divergence, the failure, the verdict
	last    string // the rightmost participant's id, for notes across the diagram
	events  int    // events drawn when nothing is aggregated
	objNote string // what the filter follows, for the aggregation note
}

type participant struct{ id, label string }

// block is one step: its opening note, its lines, and whether it saw a
// fault.
type block struct {
	open  line
	lines []line
	fault bool
	close []line // the divergence, if the step diverged
}

// line is one statement of the diagram: an arrow or a note.
type line struct {
	text  string
	key   string // the object it is about, if one
	arrow bool
	fault bool
	layer string // the event's layer, for "N more events (layer ...)"
	shape string // what makes it like another line (trace.Shape)
}

func newDiagram(r Run, f trace.Filter) *diagram {
	d := &diagram{}
	h := r.Header
	// A comment line ends at a newline: what the header quotes (a
	// replay's title holds a recording's words) is escaped.
	d.header = []string{
		trace.Escape(fmt.Sprintf("%%%% cachelab %s vs client-go %s · scenario %s: %s", h.Cachelab, h.ClientGo, h.Scenario, h.Title)),
		trace.Escape(fmt.Sprintf("%%%% stack %s · seed %d · server %s · etcd %s · cachelab's events, client-go's verdict per step", h.Stack, h.Seed, h.Server, h.Etcd)),
	}
	if h.Plant != "" {
		d.header = append(d.header, "%% planted bug in cachelab's side: "+h.Plant+" (not cachelab's own behaviour)")
	}
	if f.Object != "" || f.Layers != nil {
		d.objNote = describeFilter(f)
		d.header = append(d.header, trace.Escape("%% showing "+d.objNote))
	}
	d.parts = []participant{{"etcd", "etcd"}, {"api", apiLabel(h.Server)}}
	// Each informer its reflector, queue and indexer (start's without a
	// name, each factory's named), then the handlers, then each
	// controller's workqueue and worker.
	ev := events{handlers: map[string]string{}, informers: map[string]string{}, controllers: map[string]string{},
		cached: h.Server != scenario.ServerEtcd, cache: &cacheState{}}
	var informers, handlers, controllers []string
	for i := range r.Steps {
		sr := f.Step(r.Steps[i])
		for _, e := range sr.Sides[trace.Cachelab] {
			if _, ok := ev.informers[e.Informer]; !ok {
				ev.informers[e.Informer] = ""
				informers = append(informers, e.Informer)
			}
			if name, ok := strings.CutPrefix(e.Layer, trace.LayerHandler+"/"); ok && ev.handlers[name] == "" {
				ev.handlers[name] = handlerID(name, len(ev.handlers))
				handlers = append(handlers, name)
			}
			if e.Layer == trace.LayerWorkqueue || e.Layer == trace.LayerReconcile {
				if _, ok := ev.controllers[e.Handler]; !ok {
					ev.controllers[e.Handler] = ""
					controllers = append(controllers, e.Handler)
				}
			}
		}
	}
	slices.Sort(informers) // start's, "", first
	if len(informers) == 0 {
		informers = []string{""}
	}
	for i, inf := range informers {
		if inf != "" {
			ev.informers[inf] = fmt.Sprintf("_%d", i)
		}
		of := ""
		if inf != "" {
			of = " " + inf
		}
		d.parts = append(d.parts, participant{"refl" + ev.informers[inf], "reflector" + of}, participant{"queue" + ev.informers[inf], "queue" + of},
			participant{"idx" + ev.informers[inf], "indexer" + of})
	}
	for _, name := range handlers {
		d.parts = append(d.parts, participant{ev.handlers[name], "handler " + name})
	}
	for i, name := range controllers {
		of := ""
		if name != "" {
			ev.controllers[name], of = fmt.Sprintf("_c%d", i), " "+name
		}
		d.parts = append(d.parts, participant{"wq" + ev.controllers[name], "workqueue" + of},
			participant{"worker" + ev.controllers[name], "worker" + of + " (reconcile)"})
	}
	d.last = d.parts[len(d.parts)-1].id
	ev.last = d.last
	for i := range r.Steps {
		d.steps = append(d.steps, d.step(f.Step(r.Steps[i]), ev))
	}
	d.tail = d.ending(r)
	return d
}

func (d *diagram) step(sr trace.StepResult, ev events) block {
	b := block{}
	// A watch-list's initial objects are transformed twice: into the
	// reflector's temporary store as they arrive, then on their way to
	// the queue when the list is replayed. The first stays with the
	// reflector (issue 29).
	temp := trace.IntoTemporaryStore(sr.Sides[trace.Cachelab])
	var shown []trace.Event // the step's show lines: one note, where the first was
	showAt := 0
	for i, e := range append(append([]trace.Event(nil), sr.World...), sr.Sides[trace.Cachelab]...) {
		if e.Kind == trace.KindShow {
			if shown == nil {
				showAt = len(b.lines)
			}
			shown = append(shown, e)
			continue
		}
		if j := i - len(sr.World); j >= 0 && temp != nil && temp[j] {
			b.lines = append(b.lines, line{layer: e.Layer, key: e.Key, shape: trace.Shape(e) + "\x00temporary store",
				text: note(ev.at("refl", e), clip(e.Detail, 80)+" into the watch-list's temporary store")})
			d.events++
			continue
		}
		if l, ok := ev.line(e); ok {
			l.shape = trace.Shape(e)
			b.lines = append(b.lines, l)
			b.fault = b.fault || l.fault
			d.events++
		}
	}
	if shown != nil {
		b.lines = slices.Insert(b.lines, showAt, ev.show(sr.Cmd, shown))
		d.events++
	}
	verdict := " · client-go ✓"
	if sr.Divergence != nil {
		verdict = " · client-go ✗"
		b.close = []line{d.divergence(sr.Divergence)}
	}
	b.open = line{text: fmt.Sprintf("Note over etcd,%s: step %d · %s · %s%s", d.last, sr.Index, escape(clip(sr.Cmd, 80)), escape(sr.Pos), verdict)}
	return b
}

func (d *diagram) divergence(dv *trace.Divergence) line {
	diff := strings.Split(strings.TrimRight(dv.Diff, "\n"), "\n")
	if len(diff) > 8 {
		diff = append(diff[:8], fmt.Sprintf("… %d more lines", len(diff)-8))
	}
	for i, l := range diff {
		diff[i] = escape(clip(l, 100))
	}
	return line{text: fmt.Sprintf("Note over etcd,%s: ✗ client-go differs from cachelab in layer %s (-cachelab +client-go)<br/>%s",
		d.last, escape(dv.Layer), strings.Join(diff, "<br/>"))}
}

func (d *diagram) ending(r Run) []line {
	var out []line
	if r.Late != nil {
		out = append(out, d.divergence(r.Late))
	}
	switch {
	case r.Failure != "":
		out = append(out, line{text: fmt.Sprintf("Note over etcd,%s: ✗ the run stopped: %s", d.last, escape(clip(r.Failure, 200)))})
	case r.Late == nil && !diverged(r.Steps):
		out = append(out, line{text: fmt.Sprintf("Note over etcd,%s: ✓ %s, client-go agreed at every step", d.last, plural(len(r.Steps), "step"))})
	}
	return out
}

func diverged(steps []trace.StepResult) bool {
	return len(steps) > 0 && steps[len(steps)-1].Divergence != nil
}

func apiLabel(server string) string {
	if server == scenario.ServerEtcd {
		return "kube-apiserver (no watch cache)"
	}
	return "kube-apiserver (watch cache)"
}

// handlerID is a participant id for a handler: letters, digits and _
// only, and unique (n is the handler's index).
func handlerID(name string, n int) string {
	id := []byte("h" + fmt.Sprint(n) + "_")
	for _, c := range []byte(name) {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			id = append(id, c)
		}
	}
	return string(id)
}

func describeFilter(f trace.Filter) string {
	var parts []string
	if f.Object != "" {
		parts = append(parts, "object "+f.Object)
	}
	if f.Layers != nil {
		parts = append(parts, "layers "+strings.Join(f.Layers, ","))
	}
	return strings.Join(parts, ", ")
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return trace.Thousands(n) + " " + what + "s"
}
