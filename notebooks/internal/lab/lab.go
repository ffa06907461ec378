// Package lab runs a chapter's exercise checks and reports them the way a
// lab sheet would: one line per behaviour (its REFERENCE.md ID and what it
// says), "pass", or the first difference from client-go in plain words,
// with the line of the learner's code it comes from: the line that
// panicked (Safely), the line that made a call (Caller), or the function
// that gave a wrong answer (Func, Method). A lab's checker lives in the
// files of its exercise directory whose names start with "check" or
// "play"; every other file of a chapter is the code under check.
package lab

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Check is one behaviour an exercise must reproduce. Run returns nil when
// the learner's code behaves as client-go does, else an error that says,
// in plain words, the first place where it does not.
type Check struct {
	ID        string // REFERENCE.md ID, e.g. "S1"
	Behaviour string // what it says, in a few words
	Run       func() error
}

// Result is a check's outcome.
type Result struct {
	Check
	Err error
}

// Run runs every check. A check that panics fails with the panic and the
// line of the code under check where it happened (Safely), so an
// unfinished exercise reports rather than crashes.
func Run(checks []Check) []Result {
	out := make([]Result, len(checks))
	for i, c := range checks {
		out[i] = Result{Check: c, Err: Safely(c.Run)}
	}
	return out
}

// Passed reports whether every check passed.
func Passed(rs []Result) bool {
	for _, r := range rs {
		if r.Err != nil {
			return false
		}
	}
	return true
}

// Report prints one line per check, and the reason under a failed one.
func Report(w io.Writer, title string, rs []Result) { ReportAgainst(w, title, "client-go", rs) }

// ReportAgainst is Report for a lab checked against something other than
// client-go: ref names it ("kube-apiserver").
//
// The columns are as wide as their widest entry, so that every status
// sits in one column whatever the IDs ("E7 F4 P3") and behaviours say,
// and a failure's reason is indented under its behaviour.
func ReportAgainst(w io.Writer, title, ref string, rs []Result) {
	n := report(w, title, rs)
	fmt.Fprintf(w, "%d of %d behaviours match %s.\n", n, len(rs), ref)
}

// ReportInvariants is Report for a lab whose checks are placements of a
// story that must keep every invariant (chapter 10's): there is nothing
// to match, only invariants to keep.
func ReportInvariants(w io.Writer, title string, rs []Result) {
	n := report(w, title, rs)
	fmt.Fprintf(w, "%d of %d placements keep every invariant.\n", n, len(rs))
}

// report prints rs as ReportAgainst says, and returns how many passed.
func report(w io.Writer, title string, rs []Result) int {
	idWidth, behaviourWidth := 0, 0
	for _, r := range rs {
		idWidth = max(idWidth, utf8.RuneCountInString(r.ID))
		behaviourWidth = max(behaviourWidth, utf8.RuneCountInString(r.Behaviour))
	}
	reasonIndent := strings.Repeat(" ", 2+idWidth+2+2)
	fmt.Fprintf(w, "%s\n", title)
	n := 0
	for _, r := range rs {
		status := "pass"
		if r.Err != nil {
			status = "FAIL"
		} else {
			n++
		}
		fmt.Fprintf(w, "  %s  %s  %s\n", pad(r.ID, idWidth), pad(r.Behaviour, behaviourWidth), status)
		if r.Err != nil {
			for _, l := range strings.Split(strings.TrimRight(r.Err.Error(), "\n"), "\n") {
				fmt.Fprintf(w, "%s%s\n", reasonIndent, l)
			}
		}
	}
	return n
}

// pad is s followed by spaces to width runes (fmt's %-*s counts bytes,
// and a behaviour may say "base·2^n").
func pad(s string, width int) string {
	return s + strings.Repeat(" ", max(0, width-utf8.RuneCountInString(s)))
}
