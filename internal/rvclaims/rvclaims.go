// Package rvclaims holds what a scenario's prose says about
// resourceVersions against the trace the scenario expects. It is for
// tests only: sim's test checks every scenario's opening comment, the
// notebooks' test the prose that introduces a quoted scenario.
//
// It exists because words drift from traces (issue 27): the description
// of relist-after-compaction said the reflector "relists from rv """,
// while its own trace, like client-go, relisted at rv 3. A test cannot
// read prose, but it can read the resourceVersions prose names, and the
// few verbs that say which request asked for one:
//
//	prose                                  the trace must show
//	rv 3, rv "0", rv "", resourceVersion 4 that resourceVersion, anywhere
//	                                       (rv=3, @3, "rv 3", "(3)", ...)
//	relists ... from rv X, asks again      a LIST or watch-list at rv X,
//	from rv X                              other than the trace's first
//	re-watch ... at rv X                   a plain WATCH at rv X
//	LIST at rv X, lists from rv X          a LIST or watch-list at rv X
//
// "relist" and "re-watch" bind the first "rv X" after them in the same
// clause (up to a ".", ";", ":" or parenthesis, within 60 characters);
// "LIST" and "list" only one right after "at" or "from" ("its LIST at rv
// 0", "list from rv """, not "a list of etcd, which is at rv 3"). Prose that names
// no resourceVersion is not checked: this catches a wrong number, not a
// wrong story.
package rvclaims

import (
	"fmt"
	"regexp"
	"strings"
)

// Kind is what a claim says about its resourceVersion.
type Kind int

const (
	// Mention: the resourceVersion appears in the trace.
	Mention Kind = iota
	// Relist: a list request at it, after the first list request.
	Relist
	// Rewatch: a plain WATCH request at it.
	Rewatch
	// List: a list request at it.
	List
)

func (k Kind) String() string {
	return [...]string{"mention", "relist", "re-watch", "list"}[k]
}

// Claim is one resourceVersion the prose names.
type Claim struct {
	Text string // the words that make the claim, as written
	Kind Kind
	RV   string // as a request writes it: "" for rv "", 0 for rv 0 or "0", 3
}

// rvWord is a resourceVersion as prose writes it: rv 3, rv "3", rv "",
// RV "0", resourceVersion 4; group 1 is the value, group 2 the end of a
// range ("rv 2 to 12").
const rvWord = `\b(?:rv|RV|resourceVersion)\s+("\d*"|\d+)(?:\s+to\s+(\d+))?`

var (
	mention = regexp.MustCompile(rvWord)
	verbs   = []struct {
		kind Kind
		re   *regexp.Regexp
	}{
		{Relist, regexp.MustCompile(`\b(?:relist\w*|asks? again)\b[^.;:()]{0,60}?` + rvWord)},
		{Rewatch, regexp.MustCompile(`\bre-?watch\w*\b[^.;:()]{0,60}?` + rvWord)},
		{List, regexp.MustCompile(`\b(?:LIST|lists?)\s+(?:is\s+)?(?:at|from)\s+` + rvWord)},
	}
)

// Find returns the claims text makes, in the order they are written:
// each resourceVersion mentioned, and each bound to a verb.
func Find(text string) []Claim {
	text = strings.Join(strings.Fields(text), " ") // a claim may run over a line break
	var out []Claim
	for _, m := range mention.FindAllStringSubmatch(text, -1) {
		for _, v := range m[1:] {
			if v != "" {
				out = append(out, Claim{Text: m[0], Kind: Mention, RV: value(v)})
			}
		}
	}
	for _, verb := range verbs {
		for _, m := range verb.re.FindAllStringSubmatch(text, -1) {
			out = append(out, Claim{Text: m[0], Kind: verb.kind, RV: value(m[1])})
		}
	}
	return out
}

// Split separates the parts of text that speak of marker (as "classic
// stack") from the rest: each parenthesis that names it, and each
// sentence that names it outside a parenthesis. A description that says
// what another stack or world would show makes claims about a trace other
// than its own, to be checked against that one.
func Split(text, marker string) (about, rest string) {
	text = strings.Join(strings.Fields(text), " ")
	var in []string
	text = paren.ReplaceAllStringFunc(text, func(p string) string {
		if strings.Contains(strings.ToLower(p), marker) {
			in = append(in, p)
			return ""
		}
		return p
	})
	var out []string
	for _, s := range strings.SplitAfter(text, ". ") {
		if strings.Contains(strings.ToLower(s), marker) {
			in = append(in, s)
		} else {
			out = append(out, s)
		}
	}
	return strings.Join(in, " "), strings.Join(out, "")
}

var paren = regexp.MustCompile(`\([^()]*\)`)

// value writes a resourceVersion as a request line does: rv "3" is 3,
// rv "" stays "".
func value(v string) string {
	if v == `""` {
		return v
	}
	return strings.Trim(v, `"`)
}

// Check returns, for each claim text makes that trace does not bear out,
// a line saying which and why; nothing when all hold. trace is the
// scenario's expected output, its steps' blocks one after another.
func Check(text, trace string) []string {
	t := parse(trace)
	var out []string
	for _, c := range Find(text) {
		if !t.holds(c) {
			out = append(out, fmt.Sprintf("%q: %s", c.Text, t.why(c)))
		}
	}
	return out
}

// request is a request line of the trace: "request  w3 WATCH-LIST rv=3 ...".
var request = regexp.MustCompile(`(?m)^request\s+(?:w\d+\s+)?(LIST|WATCH-LIST|WATCH)\s.*?\brv=("[^"]*"|\S+)`)

type req struct {
	verb, rv string
	page     bool // a continue page: not a list of its own
}

type trace struct {
	text string
	reqs []req
}

func parse(text string) trace {
	t := trace{text: text}
	for _, line := range strings.Split(text, "\n") {
		if m := request.FindStringSubmatch(line); m != nil {
			t.reqs = append(t.reqs, req{verb: m[1], rv: value(m[2]), page: strings.Contains(line, "continue=")})
		}
	}
	return t
}

func (t trace) holds(c Claim) bool {
	switch c.Kind {
	case Relist:
		return t.listAt(c.RV, 1)
	case List:
		return t.listAt(c.RV, 0)
	case Rewatch:
		for _, r := range t.reqs {
			if r.verb == "WATCH" && r.rv == c.RV {
				return true
			}
		}
		return false
	}
	return t.shows(c.RV)
}

// listAt reports whether a list request (a LIST's first page, or a
// watch-list) at rv comes after the first skip of them.
func (t trace) listAt(rv string, skip int) bool {
	n := 0
	for _, r := range t.reqs {
		if r.verb == "WATCH" || r.page {
			continue
		}
		if n >= skip && r.rv == rv {
			return true
		}
		n++
	}
	return false
}

// shows reports whether the trace names rv as a resourceVersion: in a
// request (rv=3, rv=""), an object (ns0/a@3), a line of the world or the
// reflector ("rv 3", "store at rv 3"), or an error ("too old resource
// version: 2 (3)", "Too large resource version: 5, current: 4").
func (t trace) shows(rv string) bool {
	if rv == `""` {
		return strings.Contains(t.text, `rv=""`)
	}
	return regexp.MustCompile(`(?:\brv[ =]"?|@|\(|version: |current: )` + regexp.QuoteMeta(rv) + `\b`).MatchString(t.text)
}

func (t trace) why(c Claim) string {
	var asked []string
	for _, r := range t.reqs {
		if !r.page {
			asked = append(asked, r.verb+" rv="+r.rv)
		}
	}
	switch c.Kind {
	case Relist:
		return fmt.Sprintf("no list request after the first asks for rv=%s; the trace's requests: %s", c.RV, strings.Join(asked, ", "))
	case List:
		return fmt.Sprintf("no LIST or watch-list asks for rv=%s; the trace's requests: %s", c.RV, strings.Join(asked, ", "))
	case Rewatch:
		return fmt.Sprintf("no WATCH asks for rv=%s; the trace's requests: %s", c.RV, strings.Join(asked, ", "))
	}
	return fmt.Sprintf("the trace never shows resourceVersion %s", c.RV)
}
