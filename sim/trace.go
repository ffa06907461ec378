package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime/debug"
	"sort"
	"strings"

	clientfeatures "k8s.io/client-go/features"

	"github.com/cachelab/cachelab/informer"
)

// Version is cachelab's version, printed in every trace header.
const Version = "0.5.0"

// clientGoVersion is the client-go the binary was built with.
func clientGoVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "k8s.io/client-go" {
				return d.Version
			}
		}
	}
	return "v0.37.2"
}

// Header names everything a trace depends on.
type Header struct {
	Scenario     string          `json:"scenario"`
	Title        string          `json:"title"`
	IDs          []string        `json:"ids"`
	Cachelab     string          `json:"cachelab"`
	ClientGo     string          `json:"clientGo"`
	Stack        informer.Stack  `json:"stack"`
	FeatureGates map[string]bool `json:"featureGates"`
	Seed         uint64          `json:"seed"`
	Etcd         string          `json:"etcd"`
}

func newHeader(sc *Scenario, st informer.Stack, opts Options) Header {
	h := Header{Scenario: sc.Name, Title: sc.Title, IDs: sc.IDs, Cachelab: Version, ClientGo: clientGoVersion(),
		Stack: st, Seed: opts.Seed, Etcd: "embedded"}
	if len(opts.Etcd.Endpoints) > 0 {
		h.Etcd = strings.Join(opts.Etcd.Endpoints, ",")
	}
	h.FeatureGates = gatesFor(st)
	return h
}

// The client-go feature gates a stack sets. client-go's gates are global,
// so a process runs one stack at a time.
var stackGates = []clientfeatures.Feature{
	clientfeatures.InOrderInformers,
	clientfeatures.InOrderInformersBatchProcess,
	clientfeatures.UnlockWhileProcessingFIFO,
	clientfeatures.WatchListClient,
}

func gatesFor(st informer.Stack) map[string]bool {
	out := map[string]bool{}
	for _, f := range stackGates {
		out[string(f)] = clientfeatures.FeatureGates().Enabled(f)
	}
	if st == informer.Classic {
		out[string(clientfeatures.InOrderInformers)] = false
		out[string(clientfeatures.WatchListClient)] = false
	}
	return out
}

// setFeatureGates sets client-go's gates for st: the classic stack is
// InOrderInformers and WatchListClient off (both are on by default).
func setFeatureGates(st informer.Stack) error {
	type setter interface {
		SetForTesting(clientfeatures.Feature, bool) error
	}
	g, ok := clientfeatures.FeatureGates().(setter)
	if !ok {
		return fmt.Errorf("sim: client-go's feature gates (%T) cannot be set", clientfeatures.FeatureGates())
	}
	on := st != informer.Classic
	for _, f := range []clientfeatures.Feature{clientfeatures.InOrderInformers, clientfeatures.WatchListClient} {
		if err := g.SetForTesting(f, on); err != nil {
			return err
		}
	}
	return nil
}

// --- text ---

// TextStyle says how text traces look.
type TextStyle struct {
	Color bool
	// Impl is whose lines to print: "cachelab" (with a mark per step for
	// client-go's agreement), "client-go", or "both".
	Impl string
}

const layerWidth = 16

var layerColor = map[string]string{
	layerEtcd: "35", layerSim: "35", layerQueueLen: "33", layerRequest: "34", layerWatch: "36", layerReflector: "34", layerQueue: "33",
	layerPop: "33", layerIndexer: "32", layerHandler: "1;32", layerSynced: "32", layerShow: "0", layerNote: "31",
}

func paint(on bool, code, s string) string {
	if !on || code == "" || code == "0" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// FormatLines renders lines as aligned "layer  text" rows, as a scenario
// file's expected output holds them.
func FormatLines(lines []Line) string {
	return formatLines(lines, false, "")
}

func formatLines(lines []Line, color bool, prefix string) string {
	var b strings.Builder
	for _, l := range lines {
		base, _, _ := strings.Cut(l.Layer, "/")
		text := strings.ReplaceAll(l.Text, "\n", "\n"+prefix+strings.Repeat(" ", layerWidth+1))
		fmt.Fprintf(&b, "%s%s %s\n", prefix, paint(color, layerColor[base], fmt.Sprintf("%-*s", layerWidth, l.Layer)), text)
	}
	return b.String()
}

// StepOutput is a step's lines as a scenario file expects them: the
// world's, then cachelab's.
func StepOutput(sr StepResult) string {
	return FormatLines(append(append([]Line(nil), sr.World...), sr.Sides[implCachelab]...))
}

// WriteHeader prints the header as comment lines.
func WriteHeader(w io.Writer, h Header) {
	gates := make([]string, 0, len(h.FeatureGates))
	for k, v := range h.FeatureGates {
		gates = append(gates, fmt.Sprintf("%s=%t", k, v))
	}
	sort.Strings(gates)
	fmt.Fprintf(w, "# cachelab %s vs client-go %s · scenario %s: %s\n", h.Cachelab, h.ClientGo, h.Scenario, h.Title)
	fmt.Fprintf(w, "# stack %s · seed %d · etcd %s · covers %s\n", h.Stack, h.Seed, h.Etcd, strings.Join(h.IDs, " "))
	fmt.Fprintf(w, "# client-go feature gates: %s\n", strings.Join(gates, " "))
}

// WriteStep prints one step for people.
func WriteStep(w io.Writer, sr StepResult, st TextStyle) {
	head := fmt.Sprintf("── step %d: %s", sr.Index, sr.Cmd)
	fmt.Fprintf(w, "\n%s  %s\n", paint(st.Color, "1", head), paint(st.Color, "2", "("+sr.Pos+")"))
	world := formatLines(sr.World, st.Color, "  ")
	switch {
	case st.Impl == "both" || sr.Divergence != nil:
		fmt.Fprint(w, world)
		for _, impl := range []string{implCachelab, implClientGo} {
			fmt.Fprintf(w, "  %s\n", paint(st.Color, "1", "["+impl+"]"))
			fmt.Fprint(w, formatLines(sr.Sides[impl], st.Color, "    "))
		}
	default:
		fmt.Fprint(w, world)
		fmt.Fprint(w, formatLines(sr.Sides[st.Impl], st.Color, "  "))
	}
	if d := sr.Divergence; d != nil {
		fmt.Fprintf(w, "  %s\n", paint(st.Color, "1;31", fmt.Sprintf("✗ client-go differs in layer %q (-cachelab +client-go):", d.Layer)))
		for _, l := range strings.Split(strings.TrimRight(d.Diff, "\n"), "\n") {
			fmt.Fprintf(w, "    %s\n", l)
		}
		return
	}
	fmt.Fprintf(w, "  %s\n", paint(st.Color, "32", "✓ client-go agrees"))
}

// --- JSON lines ---

// jsonLine is one record of --output json: a header, then one record per
// trace line, then one per step verdict.
type jsonLine struct {
	Kind   string  `json:"kind"` // "header", "line", "step"
	Header *Header `json:"header,omitempty"`
	Step   int     `json:"step,omitempty"`
	Pos    string  `json:"pos,omitempty"`
	Cmd    string  `json:"cmd,omitempty"`
	Impl   string  `json:"impl,omitempty"` // "world", "cachelab", "client-go"
	Layer  string  `json:"layer,omitempty"`
	Key    string  `json:"key,omitempty"`
	Text   string  `json:"text,omitempty"`
	Agree  *bool   `json:"agree,omitempty"`
	Diff   string  `json:"diff,omitempty"`
}

// WriteJSONHeader writes the header record.
func WriteJSONHeader(w io.Writer, h Header) error {
	return newJSONEncoder(w).Encode(jsonLine{Kind: "header", Header: &h})
}

// WriteJSONStep writes a step's records: every line of the world and of
// the chosen implementations, then the verdict.
func WriteJSONStep(w io.Writer, sr StepResult, impl string) error {
	enc := newJSONEncoder(w)
	emit := func(who string, lines []Line) error {
		for _, l := range lines {
			if err := enc.Encode(jsonLine{Kind: "line", Step: sr.Index, Impl: who, Layer: l.Layer, Key: l.Key, Text: l.Text}); err != nil {
				return err
			}
		}
		return nil
	}
	if err := emit("world", sr.World); err != nil {
		return err
	}
	for _, who := range []string{implCachelab, implClientGo} {
		if impl == who || impl == "both" || sr.Divergence != nil {
			if err := emit(who, sr.Sides[who]); err != nil {
				return err
			}
		}
	}
	agree := sr.Divergence == nil
	v := jsonLine{Kind: "step", Step: sr.Index, Pos: sr.Pos, Cmd: sr.Cmd, Agree: &agree}
	if sr.Divergence != nil {
		v.Layer, v.Diff = sr.Divergence.Layer, sr.Divergence.Diff
	}
	return enc.Encode(v)
}

// WriteJSONFinish writes the verdict on the calls that came after the
// last step (Session.Finish) when they differ: a step record numbered one
// past the last, which disagrees.
func WriteJSONFinish(w io.Writer, d *Divergence) error {
	agree := false
	return newJSONEncoder(w).Encode(jsonLine{Kind: "step", Step: d.Step, Pos: d.Pos, Cmd: d.Cmd, Agree: &agree, Layer: d.Layer, Diff: d.Diff})
}

// newJSONEncoder writes one record per line, with "<", ">" and "&" as they
// are (traces are full of "->").
func newJSONEncoder(w io.Writer) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc
}
