package trace

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// --- text ---

// TextStyle says how text traces look.
type TextStyle struct {
	Color bool
	// Impl is whose lines to print: "cachelab" (with a mark per step for
	// client-go's agreement), "client-go", or "both".
	Impl string
	// Summarize, when above 0, shows a step's alike lines (Shape) that
	// number more than it as their first few and a line that counts the
	// rest (summarize). 0 shows every line.
	Summarize int
	// Width, when above 0, wraps each line to that many columns, at
	// spaces, continuing under the text after the layer column (Wrap).
	// 0 never wraps.
	Width int
}

const layerWidth = 16

var layerColor = map[string]string{
	LayerEtcd: "35", LayerCache: "35", LayerSim: "35", LayerQueue: "33", LayerRequest: "34", LayerWire: "34", LayerWatch: "36", LayerReflector: "34", LayerTransform: "33",
	LayerPop: "33", LayerIndexer: "32", LayerHandler: "1;32", LayerSynced: "32", LayerShow: "0", LayerNote: "31",
}

func paint(on bool, code, s string) string {
	if !on || code == "" || code == "0" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// Format renders events as aligned "layer  text" rows, as a scenario
// file's expected output holds them.
func Format(events []Event) string {
	return format(events, TextStyle{}, "")
}

// minTextWidth is the narrowest the text after the layer column is
// wrapped to, however narrow the terminal: below it, wrapping would put
// every word on a line of its own.
const minTextWidth = 20

func format(events []Event, st TextStyle, prefix string) string {
	var b strings.Builder
	indent := "\n" + prefix + strings.Repeat(" ", layerWidth+1)
	width := 0
	if st.Width > 0 {
		width = max(st.Width-len(prefix)-layerWidth-1, minTextWidth)
	}
	for _, r := range summarize(events, st.Summarize) {
		lines := Wrap(Escape(r.text()), width) // a name from a session may hold a newline, or ESC
		layer := fmt.Sprintf("%-*s", layerWidth, r.event.Layer)
		fmt.Fprintf(&b, "%s%s %s\n", prefix, paint(st.Color, layerColor[r.event.Base()], layer), strings.Join(lines, indent))
	}
	return b.String()
}

// StepOutput is a step's lines as a scenario file expects them: the
// world's, then cachelab's.
func StepOutput(sr StepResult) string {
	return Format(append(append([]Event(nil), sr.World...), sr.Sides[Cachelab]...))
}

// StepOutputWithout is StepOutput without the lines of a layer: a run
// over the wire, checked against the output the scenario expects in
// process, leaves out LayerWire.
func StepOutputWithout(sr StepResult, layer string) string {
	var kept []Event
	for _, e := range append(append([]Event(nil), sr.World...), sr.Sides[Cachelab]...) {
		if e.Layer != layer {
			kept = append(kept, e)
		}
	}
	return Format(kept)
}

// WriteHeader prints the header as comment lines, escaped (Escape): a
// replay's title and session line hold a recording's words.
func WriteHeader(w io.Writer, h Header) {
	var b strings.Builder
	writeHeader(&b, h)
	fmt.Fprint(w, EscapeLines(b.String()))
}

func writeHeader(w io.Writer, h Header) {
	gates := make([]string, 0, len(h.FeatureGates))
	for k, v := range h.FeatureGates {
		gates = append(gates, fmt.Sprintf("%s=%t", k, v))
	}
	sort.Strings(gates)
	fmt.Fprintf(w, "# cachelab %s vs client-go %s · scenario %s: %s\n", h.Cachelab, h.ClientGo, h.Scenario, h.Title)
	covers := "" // a scenario that names no IDs gets no "covers"
	if len(h.IDs) > 0 {
		covers = " · covers " + strings.Join(h.IDs, " ")
	}
	fmt.Fprintf(w, "# stack %s · seed %d · server %s · etcd %s%s\n", h.Stack, h.Seed, h.Server, h.Etcd, covers)
	fmt.Fprintf(w, "# client-go feature gates: %s\n", strings.Join(gates, " "))
	if h.Cluster != "" {
		fmt.Fprintf(w, "# cluster %s\n", h.Cluster)
	}
	if h.Replay != "" {
		fmt.Fprintf(w, "# replay of %s\n", h.Replay)
	}
	if h.Plant != "" {
		fmt.Fprintf(w, "# planted bug in cachelab's side: %s (not cachelab's own behaviour)\n", h.Plant)
	}
	env := make([]string, 0, len(h.Env))
	for k, v := range h.Env {
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	if len(env) > 0 {
		fmt.Fprintf(w, "# env %s (both sides)\n", strings.Join(env, " "))
	}
}

// WriteStep prints one step for people, escaped (Escape).
func WriteStep(w io.Writer, sr StepResult, st TextStyle) {
	head := Escape(fmt.Sprintf("── step %d: %s", sr.Index, sr.Cmd))
	pos := Escape(sr.Pos)
	sep := "  " // before the step's file:line; on a line of its own if the heading would not fit
	if st.Width > 0 && utf8.RuneCountInString(head)+len(sep)+len(pos)+2 > st.Width {
		sep = "\n   "
	}
	fmt.Fprintf(w, "\n%s%s%s\n", paint(st.Color, "1", head), sep, paint(st.Color, "2", "("+pos+")"))
	world := format(sr.World, st, "  ")
	switch {
	case st.Impl == "both" || sr.Divergence != nil:
		fmt.Fprint(w, world)
		for _, impl := range []string{Cachelab, ClientGo} {
			fmt.Fprintf(w, "  %s\n", paint(st.Color, "1", "["+impl+"]"))
			fmt.Fprint(w, format(sr.Sides[impl], st, "    "))
		}
	default:
		fmt.Fprint(w, world)
		fmt.Fprint(w, format(sr.Sides[st.Impl], st, "  "))
	}
	if d := sr.Divergence; d != nil {
		fmt.Fprintf(w, "  %s\n", paint(st.Color, "1;31", fmt.Sprintf("✗ client-go differs in layer %q (-cachelab +client-go):", d.Layer)))
		for _, l := range strings.Split(strings.TrimRight(d.Diff, "\n"), "\n") {
			fmt.Fprintf(w, "    %s\n", Escape(l))
		}
		return
	}
	agrees := "✓ client-go agrees"
	if sr.Took > 0 {
		agrees += fmt.Sprintf(" (the step took %s on the cluster)", sr.Took.Round(time.Millisecond))
	}
	fmt.Fprintf(w, "  %s\n", paint(st.Color, "32", agrees))
}
