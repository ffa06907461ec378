package main

import (
	"io"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/cachelab/cachelab/sim/scenario"
	"github.com/cachelab/cachelab/sim/trace"
)

// listCommands prints the commands a scenario file can use
// (scenarios --commands) as two columns, usage and help, fitted to the
// terminal (commandsWidth).
func (m *Main) listCommands() error {
	width, err := m.commandsWidth()
	if err != nil {
		return usage(err)
	}
	_, err = io.WriteString(m.Stdout, commandTable(scenario.CommandDocs(), width))
	return writeError(err, "while listing the commands")
}

// defaultCommandsWidth is the width --commands wraps to without a
// terminal to measure.
const defaultCommandsWidth = 80

// commandsWidth is the width --commands wraps to: as the trace's
// (width: $CACHELAB_TERM_WIDTH, 0 for none, else the terminal's), but 80
// columns where there is no terminal. The list is read, not grepped: its
// help runs to 390 columns, which no reader follows, and every command
// still starts a line of its own.
func (m *Main) commandsWidth() (int, error) {
	if m.Getenv(envTermWidth) != "" {
		return m.width()
	}
	if w := m.termWidth(m.Stdout); w > 0 {
		return w, nil
	}
	return defaultCommandsWidth, nil
}

// commandTable lays docs out in two columns for a terminal width columns
// wide (0: any width, one line a command). The help column starts after
// the widest usage that fits in two fifths of the width; a longer usage
// has lines of its own (continuing four columns in), and its help starts
// on the line below, in the help column, so that every help starts in
// one column. Each help wraps at spaces within its column.
func commandTable(docs []scenario.CommandDoc, width int) string {
	col := usageColumn(docs, width)
	helpWidth := 0
	if width > 0 {
		helpWidth = max(width-col-2, 20)
	}
	indent := strings.Repeat(" ", col+2)
	var b strings.Builder
	for _, d := range docs {
		help := trace.Wrap(d.Help, helpWidth)
		if n := utf8.RuneCountInString(d.Usage); n <= col {
			b.WriteString(d.Usage + strings.Repeat(" ", col-n+2) + help[0] + "\n")
			help = help[1:]
		} else {
			for _, l := range hanging("", "    ", d.Usage, width) {
				b.WriteString(l + "\n")
			}
		}
		for _, l := range help {
			b.WriteString(indent + l + "\n")
		}
	}
	return b.String()
}

// usageColumn is the width of the usage column: the widest usage, or, on
// a terminal, the widest that leaves the help three fifths of it (at least
// 16 columns of usage, which every name fits).
func usageColumn(docs []scenario.CommandDoc, width int) int {
	limit := width*2/5 - 2
	if width <= 0 {
		limit = math.MaxInt
	}
	col := 0
	for _, d := range docs {
		if n := utf8.RuneCountInString(d.Usage); n <= max(limit, 16) {
			col = max(col, n)
		}
	}
	return col
}
