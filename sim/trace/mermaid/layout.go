package mermaid

import (
	"fmt"
	"sort"
	"strings"

	"github.com/cachelab/cachelab/sim/trace"
)

// faultShade is the background of a step that saw a fault.
const faultShade = "rect rgb(255, 228, 225)"

// reserve is room kept for the closing notes when steps are cut.
const reserve = 2000

// layout writes the diagram with at most perStep events a step (all for
// -1), and reports whether it fits b. With perStep 0 it draws only the
// steps that fit, says which are left out, and always fits.
func (d *diagram) layout(perStep int, b Budget) (string, bool) {
	var body strings.Builder
	drawn, arrows := 0, 0
	cut := -1 // the first step left out, if any
	for i, st := range d.steps {
		text, n, a := d.block(st, perStep)
		if perStep == 0 && (body.Len()+len(text)+reserve > b.Chars || arrows+a > b.Messages) {
			cut = i
			break
		}
		body.WriteString(text)
		drawn, arrows = drawn+n, arrows+a
	}
	if cut >= 0 {
		fmt.Fprintf(&body, "    Note over etcd,%s: steps %d to %d not drawn: the diagram would be over GitHub's Mermaid limits. Follow one object (--object ns/name) or read the text trace\n",
			d.last, cut+1, len(d.steps))
	}
	for _, l := range d.tail {
		body.WriteString("    " + l.text + "\n")
	}
	var out strings.Builder
	for _, h := range d.header {
		out.WriteString(h + "\n")
	}
	out.WriteString("sequenceDiagram\n")
	for _, p := range d.parts {
		fmt.Fprintf(&out, "    participant %s as %s\n", p.id, p.label)
	}
	if perStep >= 0 {
		fmt.Fprintf(&out, "    Note over etcd,%s: aggregated to fit GitHub's Mermaid limits: %s of %s events drawn, %s. Follow one object (--object ns/name) or read the text trace for all\n",
			d.last, trace.Thousands(drawn), trace.Thousands(d.events), kept(perStep))
	}
	out.WriteString(body.String())
	return out.String(), out.Len() <= b.Chars && arrows <= b.Messages
}

// block writes one step, with at most perStep of its events (all for
// -1), and returns how many events and arrows it drew.
func (d *diagram) block(st block, perStep int) (text string, events, arrows int) {
	var b strings.Builder
	indent := "    "
	if st.fault {
		b.WriteString(indent + faultShade + "\n")
		indent += "    "
	}
	b.WriteString(indent + st.open.text + "\n")
	keep := choose(st.lines, perStep)
	left := map[string]int{}
	for i, l := range st.lines {
		if !keep[i] {
			left[l.layer]++
			continue
		}
		b.WriteString(indent + l.text + "\n")
		events++
		if l.arrow {
			arrows++
		}
	}
	if n := len(st.lines) - events; n > 0 {
		fmt.Fprintf(&b, "%sNote over etcd,%s: … %s more events (%s)\n", indent, d.last, trace.Thousands(n), countByLayer(left))
	}
	for _, l := range st.close {
		b.WriteString(indent + l.text + "\n")
	}
	if st.fault {
		b.WriteString("    end\n")
	}
	return b.String(), events, arrows
}

// kept says what choose keeps of a step.
func kept(perStep int) string {
	if perStep == 0 {
		return "only the first fault of a step"
	}
	return fmt.Sprintf("up to %d a step: its faults, its lines unlike any other, then whole journeys of its first objects", perStep)
}

// choose picks the lines a step draws: all for -1; else up to perStep,
// faults first (at least one, if the step has any), then every line
// unlike any other of the step (the one real update among thousands of
// no-op ones, a relist's reflector lines, a tombstone: trace.Shape), then
// whole journeys of the objects in the order they first appear (one
// object followed through every layer says more than the first lines of
// one layer), then lines about no object.
func choose(lines []line, perStep int) map[int]bool {
	keep := map[int]bool{}
	if perStep < 0 {
		for i := range lines {
			keep[i] = true
		}
		return keep
	}
	first := map[string]int{} // an object's rank: the order it first appears
	shapes := map[string]int{}
	for _, l := range lines {
		if _, ok := first[l.key]; !ok && l.key != "" {
			first[l.key] = len(first)
		}
		shapes[l.shape]++
	}
	rank := func(l line) int {
		switch {
		case l.fault:
			return -2
		case shapes[l.shape] == 1:
			return -1
		case l.key == "":
			return len(first)
		}
		return first[l.key]
	}
	order := make([]int, len(lines))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return rank(lines[order[a]]) < rank(lines[order[b]]) })
	for _, i := range order {
		if len(keep) >= max(perStep, 1) || len(keep) >= perStep && !lines[i].fault {
			break
		}
		keep[i] = true
	}
	return keep
}

// countByLayer says "3 watch, 2 transform", in the order of the layers.
func countByLayer(n map[string]int) string {
	layers := make([]string, 0, len(n))
	for l := range n {
		layers = append(layers, l)
	}
	sort.Slice(layers, func(i, j int) bool {
		ri, rj := trace.Rank(layers[i]), trace.Rank(layers[j])
		return ri < rj || ri == rj && layers[i] < layers[j]
	})
	parts := make([]string, len(layers))
	for i, l := range layers {
		parts[i] = trace.Thousands(n[l]) + " " + l
	}
	return strings.Join(parts, ", ")
}
