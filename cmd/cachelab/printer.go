package main

import (
	"fmt"
	"io"

	"github.com/cachelab/cachelab/sim/trace"
)

// printer writes a run's trace as it happens: text for people, or JSON
// lines (a header record, then each step's lines and verdict, and at the
// end (failure.go) an error record if the run failed, and a summary).
type printer struct {
	w     *errWriter
	jw    *trace.JSONWriter // nil for text
	style trace.TextStyle
	html  *htmlPage // with --output html=FILE, besides the text
}

func (m *Main) newPrinter(o *runOptions) *printer {
	p := &printer{w: &errWriter{w: m.Stdout}, style: trace.TextStyle{Color: m.color(), Impl: o.impl.value}}
	switch o.output.value {
	case "json":
		p.jw = trace.NewJSONWriter(p.w, o.impl.value)
	case "html":
		p.html = &htmlPage{file: o.htmlFile, stderr: m.Stderr}
	}
	return p
}

func (p *printer) header(h trace.Header) error {
	if p.html != nil {
		p.html.header(h)
	}
	if p.jw != nil {
		return p.jw.Header(h)
	}
	trace.WriteHeader(p.w, h)
	return p.w.err
}

func (p *printer) step(sr trace.StepResult) error {
	if p.html != nil {
		p.html.step(sr)
	}
	if p.jw != nil {
		return p.jw.Step(sr)
	}
	trace.WriteStep(p.w, sr, p.style)
	return p.w.err
}

// finish prints the divergence in the calls that came after the last
// step: in JSON, as the record of a step one past the last.
func (p *printer) finish(d *trace.Divergence) error {
	if p.html != nil {
		p.html.finish(d)
	}
	if p.jw != nil {
		return p.jw.Late(d)
	}
	fmt.Fprintf(p.w, "%s\n", d.Error())
	return p.w.err
}

// summary ends a text trace with a line saying how the run went. JSON
// output ends with its summary record instead (end).
func (p *printer) summary(line string) error {
	if p.jw != nil {
		return nil
	}
	fmt.Fprintf(p.w, "\n%s\n", line)
	return p.w.err
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
