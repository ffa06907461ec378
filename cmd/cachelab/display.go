package main

import (
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/term"
	"k8s.io/utils/clock"

	"github.com/cachelab/cachelab/sim/trace"
)

// How the text trace fits a person: what is summarized, how wide lines
// are, and whether a long step shows its progress. None of it changes
// what a scenario file is checked against or what --rewrite writes
// (trace.StepOutput: every line, unwrapped).

// summaryLimit is how many alike lines (trace.Shape) a step shows
// before it summarizes them (trace.TextStyle.Summarize), unless --full.
// A 10,000-object start has groups of 10,000; no built-in scenario but
// list-pages and cut-between-pages (501 objects) have a group over 100.
const summaryLimit = 100

// envTermWidth, when set to a number of columns, is the terminal width
// the text trace (and an error on stderr) is wrapped to, whether or not
// stdout is a terminal (0: no wrapping). It is for tests, which cannot
// give a run a terminal of a chosen size, and for a terminal that does
// not say its size.
const envTermWidth = "CACHELAB_TERM_WIDTH"

// width is the column to wrap the text trace at: $CACHELAB_TERM_WIDTH,
// else stdout's width when it is a terminal, else 0 (no wrapping: a file
// or a pipe gets each line whole, for grep).
func (m *Main) width() (int, error) {
	if s := m.Getenv(envTermWidth); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("$%s=%q: want a number of columns, such as 80", envTermWidth, s)
		}
		return n, nil
	}
	return m.termWidth(m.Stdout), nil
}

// errorf writes a message to stderr, each of its lines wrapped at spaces
// to stderr's terminal width ($CACHELAB_TERM_WIDTH, as for the trace, or
// the terminal's; unwrapped when it is not a terminal), continuing under
// an indent: a long error breaks between words, not in the middle of one.
// Control characters in it are escaped (trace.Escape).
func (m *Main) errorf(format string, a ...any) {
	w := m.termWidth(m.Stderr)
	if s := m.Getenv(envTermWidth); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n >= 0 {
			w = n
		}
	}
	// A message may quote a session's names or a server's words: escaped,
	// line by line (trace.Escape).
	text := trace.EscapeLines(strings.TrimSuffix(fmt.Sprintf(format, a...), "\n"))
	var b strings.Builder
	for _, line := range strings.Split(text, "\n") {
		parts := trace.Wrap(line, w)
		b.WriteString(parts[0] + "\n")
		if len(parts) == 1 {
			continue
		}
		indent := line[:len(line)-len(strings.TrimLeft(line, " "))] + "    "
		for _, p := range trace.Wrap(strings.Join(parts[1:], " "), max(w-len(indent), 20)) {
			b.WriteString(indent + p + "\n")
		}
	}
	fmt.Fprint(m.Stderr, b.String())
}

// termWidth is a terminal stream's width in columns, or 0.
func (m *Main) termWidth(stream any) int {
	f, ok := stream.(interface{ Fd() uintptr })
	if !ok || !m.IsTerminal(stream) {
		return 0
	}
	w, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 0
	}
	return w
}

// showProgress reports whether long steps draw a progress line on stderr:
// --progress always or never, or by default (auto) when stderr is a
// terminal. (--progress is hidden: it is there for tests, which have no
// terminal for stderr.)
func (m *Main) showProgress(o *runOptions) bool {
	switch o.progress.value {
	case "always":
		return true
	case "never":
		return false
	}
	return m.IsTerminal(m.Stderr)
}

// textStyle is how the text trace looks.
func (m *Main) textStyle(o *runOptions) (trace.TextStyle, error) {
	st := trace.TextStyle{Color: m.color(), Impl: o.impl.value}
	if !o.full {
		st.Summarize = summaryLimit
	}
	w, err := m.width()
	st.Width = w
	return st, err
}

// startProgress starts step n's progress line, if there is to be one
// (showProgress), and returns the func that erases it.
func (m *Main) startProgress(o *runOptions, ses session, n int, cmd string) (end func()) {
	if !m.showProgress(o) {
		return func() {}
	}
	newTicker := m.NewTicker
	if newTicker == nil { // a Main not made by NewMain
		newTicker = clock.RealClock{}.NewTicker
	}
	// --progress always, for tests, also draws the line as the step
	// begins: what a test sees must not depend on how fast the machine
	// gets through the step's first quarter second.
	return startProgress(m.Stderr, newTicker(progressEvery), m.termWidth(m.Stderr), ses.Progress, n, cmd, o.progress.value == "always")
}
