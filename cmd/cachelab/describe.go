package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cachelab/cachelab/sim/scenario"
	"github.com/cachelab/cachelab/sim/trace"
)

// describe writes what a scenario shows, the IDs it covers (its "#
// Covers:" line's), its world and its steps. With width above 0, every
// line is wrapped to it, at spaces: the description (the file's comment
// is wrapped at some 72 columns, which a narrower terminal would break
// mid-word), and the heading, Covers, Server, Env, Steps and the line about
// --file, each continuing under its text (issue 47, case 21).
func describe(w io.Writer, sc *scenario.Scenario, width int) {
	writeHanging(w, "", "  ", sc.Name+"  ("+sc.File+")", width)
	fmt.Fprintln(w)
	for _, l := range about(sc, width) {
		fmt.Fprintf(w, "  %s\n", l)
	}
	fmt.Fprintln(w)
	if len(sc.IDs) > 0 { // a file of one's own may name none
		writeWrapped(w, "Covers:  ", strings.Join(sc.IDs, " ")+" (REFERENCE.md)", width)
	}
	what, why, _ := strings.Cut(world(sc), "\n")
	writeWrapped(w, "Server:  ", what, width)
	writeWrapped(w, "         ", strings.TrimLeft(why, " "), width)
	if sc.Detector {
		writeWrapped(w, "Env:     ", "the data consistency detector is on for both sides: "+scenario.EnvDetector+" is true (its \"# Env:\" line)", width)
	}
	if len(sc.Hints) > 0 {
		describeHints(w, sc, width)
	}
	fmt.Fprintln(w)
	writeHanging(w, "", "  ", fmt.Sprintf("Steps ('cachelab run %s' prints what each does):", sc.Name), width)
	describeSteps(w, sc, width)
	fmt.Fprintln(w)
	writeHanging(w, "", "  ", fmt.Sprintf("'cachelab scenarios %s --file' prints the file, to copy and edit.", sc.Name), width)
}

// about is the scenario's description, its "Covers:", "Server:", "Env:"
// and "Explore:" lines aside (describe says those its own way), wrapped again
// to width (if above 0) when a line of it is too wide.
func about(sc *scenario.Scenario, width int) []string {
	var lines []string
	for _, l := range strings.Split(sc.About, "\n") {
		if !strings.HasPrefix(l, "Covers:") && !strings.HasPrefix(l, "Server:") && !strings.HasPrefix(l, "Explore:") && !strings.HasPrefix(l, "Env:") {
			lines = append(lines, l)
		}
	}
	if width <= 0 || widest(strings.Join(lines, "\n"))+2 <= width {
		return lines
	}
	var wrapped []string
	for i, para := range strings.Split(strings.Join(lines, "\n"), "\n\n") {
		if i > 0 {
			wrapped = append(wrapped, "")
		}
		wrapped = append(wrapped, trace.Wrap(strings.Join(strings.Fields(para), " "), max(width-2, 20))...)
	}
	return wrapped
}

// describeHints writes the scenario's "# Explore:" hints: the command
// that runs every placement, then each hint's placement and story.
func describeHints(w io.Writer, sc *scenario.Scenario, width int) {
	var kinds []string
	for _, h := range sc.Hints {
		if !slices.Contains(kinds, h.Fault.Kind) {
			kinds = append(kinds, h.Fault.Kind)
		}
	}
	writeWrapped(w, "Explore: ", fmt.Sprintf("'cachelab explore %s --faults %s' runs every placement; among them:", sc.Name, strings.Join(kinds, ",")), width)
	for _, h := range sc.Hints {
		writeWrapped(w, "         ", h.Placement().Describe(sc), width)
		writeWrapped(w, "           -> ", h.Story, width)
	}
}

// describeSteps writes the steps as a table, STEP, LINE and COMMAND, a
// command too long for the width continuing under the COMMAND column.
func describeSteps(w io.Writer, sc *scenario.Scenario, width int) {
	stepW, lineW := len("STEP"), len("LINE")
	for n, st := range sc.Steps {
		stepW, lineW = max(stepW, len(strconv.Itoa(n+1))), max(lineW, len(strconv.Itoa(st.Line)))
	}
	row := func(step, line string) string { return fmt.Sprintf("  %-*s  %-*s  ", stepW, step, lineW, line) }
	fmt.Fprintln(w, row("STEP", "LINE")+"COMMAND")
	indent := strings.Repeat(" ", len(row("", "")))
	for n, st := range sc.Steps {
		writeHanging(w, row(strconv.Itoa(n+1), strconv.Itoa(st.Line)), indent, st.Text, width)
	}
}

// writeWrapped writes text after prefix, wrapped to width (if above 0)
// with the lines after the first indented as far as the prefix.
func writeWrapped(w io.Writer, prefix, text string, width int) {
	writeHanging(w, prefix, strings.Repeat(" ", utf8.RuneCountInString(prefix)), text, width)
}

// writeHanging writes the lines of hanging.
func writeHanging(w io.Writer, first, rest, text string, width int) {
	for _, l := range hanging(first, rest, text, width) {
		fmt.Fprintln(w, l)
	}
}

// hanging is text wrapped at spaces to width (if above 0), its first
// line after first and the others after rest: a hanging indent. Each
// part of the text is wrapped to at least 20 columns, however narrow the
// width, and a word longer than that stands on a line of its own.
func hanging(first, rest, text string, width int) []string {
	if width <= 0 || utf8.RuneCountInString(first+text) <= width {
		return []string{first + text}
	}
	lines := trace.Wrap(text, max(width-utf8.RuneCountInString(first), 20))
	out := []string{first + lines[0]}
	if len(lines) > 1 {
		for _, l := range trace.Wrap(strings.Join(lines[1:], " "), max(width-utf8.RuneCountInString(rest), 20)) {
			out = append(out, rest+l)
		}
	}
	return out
}

// world says which kube-apiserver a scenario runs behind, and why: two
// lines, the second indented under the first.
func world(sc *scenario.Scenario) string {
	const (
		cache = "watchcache: kube-apiserver's watch cache in front of etcd\n         "
		etcd  = "etcd: kube-apiserver with its watch cache off, every request read from etcd\n         "
	)
	switch {
	case sc.Server == scenario.ServerWatchCache:
		return cache + "(its \"# Server:\" line)"
	case sc.Server == scenario.ServerEtcd:
		return etcd + "(its \"# Server:\" line)"
	case sc.Server == scenario.ServerAny:
		return cache + "(the default; its \"# Server: any\" line says it means the same with --server etcd)"
	case sc.WrittenFor() == scenario.ServerEtcd:
		return etcd + "(it pulls a lever only that world has)"
	}
	return cache + "(the default: it names no server and pulls no etcd-only lever)"
}
