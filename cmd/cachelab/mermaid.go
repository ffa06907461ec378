package main

import (
	"github.com/cachelab/cachelab/sim/trace"
	"github.com/cachelab/cachelab/sim/trace/mermaid"
)

// mermaidOut gathers a run for --output mermaid, which can only be drawn
// once it is over: the participants come first, and the size guard needs
// every step.
type mermaidOut struct {
	run     mermaid.Run
	opts    mermaid.Options
	started bool // the header came: there is a run to draw
}

// endMermaid writes the diagram of whatever ran, with a note saying why
// the run stopped if it failed other than by a divergence (which the
// diagram shows). A run that failed before it started draws nothing:
// stderr says why.
func (p *printer) endMermaid(err error) error {
	if !p.mm.started {
		return err
	}
	if err != nil && failureOf(err).Kind != trace.FailDivergence {
		p.mm.run.Failure = failureOf(err).Message
	}
	_, werr := p.w.Write([]byte(mermaid.Render(p.mm.run, p.mm.opts)))
	if err != nil {
		return err
	}
	return writeError(werr, "at the end")
}
