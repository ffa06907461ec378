package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/cachelab/cachelab/sim/trace"
	"github.com/cachelab/cachelab/sim/trace/mermaid"
)

// printer writes a run's trace: as it happens, text for people (with
// --output html=FILE, also kept for the page written at the end, html.go)
// or JSON lines (a header record, then each step's lines and verdict, and
// at the end (failure.go) an error record if the run failed, and a
// summary); or, with --output mermaid, kept for the diagram drawn at the
// end (mermaid.go).
type printer struct {
	w      *errWriter
	jw     *trace.JSONWriter // nil for text
	mm     *mermaidOut       // nil but for --output mermaid (mermaid.go)
	html   *htmlPage         // with --output html=FILE, besides the text
	style  trace.TextStyle
	filter trace.Filter // --only, --object
	// story is what each step did to --object's object, told after the
	// run in the text output, each sentence with its cause where the
	// trace shows it (narrator).
	story      []trace.StoryStep
	narrator   *trace.Narrator
	queueWorld bool
}

func (m *Main) newPrinter(o *runOptions, style trace.TextStyle) *printer {
	p := &printer{w: &errWriter{w: m.Stdout}, style: style, filter: o.filter()}
	switch o.output.value {
	case "json":
		p.jw = trace.NewJSONWriter(p.w, o.impl.value)
	case "html":
		p.html = &htmlPage{file: o.htmlFile, stderr: m.Stderr}
	case "mermaid":
		p.mm = &mermaidOut{opts: mermaid.Options{Filter: p.filter}}
	}
	return p
}

// text reports whether the trace is written for people, as it happens.
func (p *printer) text() bool { return p.jw == nil && p.mm == nil }

func (p *printer) header(h trace.Header) error {
	if p.html != nil {
		p.html.header(h)
	}
	p.narrator = trace.NewNarrator(h)
	if p.mm != nil {
		p.mm.run.Header, p.mm.started = h, true
		return nil
	}
	if p.jw != nil {
		return p.jw.Header(h)
	}
	var b strings.Builder
	trace.WriteHeader(&b, h)
	fmt.Fprint(p.w, p.wrap(b.String(), "#   "))
	return p.w.err
}

func (p *printer) step(sr trace.StepResult) error {
	if p.html != nil {
		p.html.step(sr)
	}
	if p.mm != nil {
		p.mm.run.Steps = append(p.mm.run.Steps, sr)
		return nil
	}
	if p.jw != nil {
		return p.jw.Step(sr)
	}
	trace.WriteStep(p.w, p.filter.Step(sr), p.style)
	if p.filter.Object != "" {
		p.queueWorld = p.queueWorld || trace.QueueWorld(sr)
		if p.narrator == nil { // a trace always has its header first; this keeps a printer without one safe
			p.narrator = trace.NewNarrator(trace.Header{})
		}
		if st, ok := trace.StoryOf(sr, p.narrator.Step(sr, p.queueWorld), p.filter.Object); ok {
			p.story = append(p.story, st)
		}
	}
	return p.w.err
}

// finish prints the divergence in the calls that came after the last
// step: in JSON, as the record of a step one past the last.
func (p *printer) finish(d *trace.Divergence) error {
	if p.html != nil {
		p.html.finish(d)
	}
	if p.mm != nil {
		p.mm.run.Late = d
		return nil
	}
	if p.jw != nil {
		return p.jw.Late(d)
	}
	fmt.Fprintf(p.w, "%s\n", trace.EscapeLines(d.Error()))
	return p.w.err
}

// summary ends a text trace with a line saying how the run went. JSON
// output ends with its summary record instead (end).
func (p *printer) summary(line string) error {
	if !p.text() {
		return nil
	}
	if p.filter.Object != "" {
		var b strings.Builder
		trace.WriteStory(&b, p.filter.Object, p.story)
		fmt.Fprint(p.w, p.wrap(b.String(), "        "))
	}
	fmt.Fprintf(p.w, "\n%s", p.wrap(trace.EscapeLines(line)+"\n", "  "))
	return p.w.err
}

// wrap fits each line of text to the terminal's width (trace.Wrap),
// keeping its own indentation (a story's sentence stays under its step)
// and continuing it after indent, or further in under a line indented
// as far; the trace's own lines are wrapped by trace.WriteStep, under
// the text after the layer column.
func (p *printer) wrap(text, indent string) string {
	if p.style.Width <= 0 {
		return text
	}
	var b strings.Builder
	for _, line := range strings.SplitAfter(strings.TrimSuffix(text, "\n"), "\n") {
		line = strings.TrimSuffix(line, "\n")
		body := strings.TrimLeft(line, " ")
		lead, next := line[:len(line)-len(body)], indent
		if len(lead) >= len(next) {
			next = lead + "  "
		}
		b.WriteString(lead + strings.Join(trace.Wrap(body, p.style.Width-len(next)), "\n"+next) + "\n")
	}
	return b.String()
}

// errWriter keeps the first write error: sim's text writers do not return
// one, and a run whose output cannot be written should stop.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(b []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(b)
	e.err = err
	return n, err
}
