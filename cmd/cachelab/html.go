package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/cachelab/cachelab/sim/trace"
	"github.com/cachelab/cachelab/sim/trace/htmlview"
)

// outputFlag is --output: text, json, or html=FILE, which prints the text
// trace as usual and writes the run as a timeline page to FILE
// (sim/trace/htmlview). A page is a file, not a stream: it is written
// once the run has ended, however it ended.
type outputFlag struct {
	*choice
	file *string // html's FILE
}

func (o outputFlag) Set(s string) error {
	kind, file, hasFile := strings.Cut(s, "=")
	switch {
	case kind == "html" && !hasFile:
		return errors.New("--output html needs the file to write the page to: --output html=run.html")
	case kind == "html" && file == "":
		return errors.New("--output html= needs a file name: --output html=run.html")
	case kind == "html":
		*o.file = file
	case hasFile:
		return fmt.Errorf("--output %s takes no file: only html=FILE does", kind)
	}
	return o.choice.Set(kind)
}

// htmlPage collects what a page shows while the text trace is printed.
type htmlPage struct {
	file    string
	stderr  io.Writer
	started bool // a header was printed: there is a run to draw
	run     htmlview.Run
}

func (h *htmlPage) header(hd trace.Header)     { h.started, h.run.Header = true, hd }
func (h *htmlPage) step(sr trace.StepResult)   { h.run.Steps = append(h.run.Steps, sr) }
func (h *htmlPage) finish(d *trace.Divergence) { h.run.Late = d }

// write writes the page of a run that ended with err (nil if it went
// well), and returns the error the run ends with: err, or the page's own
// if the run went well. A run that never started (bad input, etcd down)
// has no page; a divergence has one, marked.
func (h *htmlPage) write(err error) error {
	if !h.started {
		return err
	}
	f, werr := os.Create(h.file)
	if werr == nil {
		werr = htmlview.Write(f, h.run)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
	}
	if werr != nil {
		werr = fmt.Errorf("--output html: writing the page: %w", werr)
		if err != nil {
			fmt.Fprintf(h.stderr, "cachelab: %v\n", werr)
			return err
		}
		return runError(werr)
	}
	fmt.Fprintf(h.stderr, "timeline of %d steps written to %s: open it in a browser\n", len(h.run.Steps), h.file)
	return err
}

// Type names the values in the help: html takes a file.
func (o outputFlag) Type() string { return "text|json|html=FILE" }
