package lab

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// What CI proves of every lab, both ways: the reference solution passes,
// the untouched skeleton fails with messages a learner can act on, and no
// check passes whatever the code does.

// SolutionPasses fails t for each check the reference solution fails.
func SolutionPasses(t *testing.T, checks []Check) {
	t.Helper()
	for _, r := range Run(checks) {
		if r.Err != nil {
			t.Errorf("%s %s: %v", r.ID, r.Behaviour, r.Err)
		}
	}
}

// SkeletonFails checks that the skeleton fails the lab, and that every
// failure says what client-go does. checks are the lab's checks run on
// the skeleton as it is handed out: the copy of the learner's file in the
// exercise's skeleton/ directory, never the learner's file itself, so
// that neither a learner's work nor a maintainer's edit to a comment can
// take the skeleton out of the proof, as they could when the test ran
// only while a hash of the learner's file matched (issue 47). That the
// copy is still the learner's file is
// TestSkeletonCopiesAreTheLearnersFiles's to check (chapters_test.go).
func SkeletonFails(t *testing.T, checks []Check) {
	t.Helper()
	SkeletonFailsAgainst(t, "client-go", checks)
}

// SkeletonFailsAgainst is SkeletonFails for a lab checked against
// something other than client-go: every failure must name ref.
func SkeletonFailsAgainst(t *testing.T, ref string, checks []Check) {
	t.Helper()
	rs := Run(checks)
	if Passed(rs) {
		t.Fatal("the skeleton passes the lab")
	}
	for _, r := range rs {
		if r.Err != nil && !strings.Contains(r.Err.Error(), ref) {
			t.Errorf("%s %s: the message does not say what %s does: %v", r.ID, r.Behaviour, ref, r.Err)
		}
	}
	var b strings.Builder
	ReportAgainst(&b, "skeleton", ref, rs)
	t.Logf("the skeleton's report:\n%s", b.String())
}

// EachCanFail checks that every check of the reference run is failed by
// at least one of the mistakes (each a run of the same checks against a
// plausible wrong solution).
func EachCanFail(t *testing.T, reference []Check, mistakes map[string][]Check) {
	t.Helper()
	failed := map[int]bool{}
	for _, checks := range mistakes {
		for i, r := range Run(checks) {
			if r.Err != nil {
				failed[i] = true
			}
		}
	}
	for i, c := range reference {
		if !failed[i] {
			t.Errorf("%s %s: no mistake fails it", c.ID, c.Behaviour)
		}
	}
}

// Mistake is a plausible wrong solution, planted to prove the checks: the
// lab's checks run against it, and what its report must say.
type Mistake struct {
	Name   string
	Checks []Check
	// Says are the words a learner who made this mistake must read: one
	// failed check's message holds every one of them (the behaviour that
	// differs, the line of the code that is wrong, ...).
	Says []string
}

// MistakesFail checks both ways that the checks catch each mistake:
// every mistake fails a check whose message says what it must, and every
// check of the reference run is failed by at least one mistake, so none
// passes whatever the code does.
func MistakesFail(t *testing.T, reference []Check, mistakes []Mistake) {
	t.Helper()
	runs := map[string][]Check{}
	for _, m := range mistakes {
		runs[m.Name] = m.Checks
		rs := Run(m.Checks)
		if Passed(rs) {
			t.Errorf("mistake %q passes every check", m.Name)
			continue
		}
		if !anySays(rs, m.Says) {
			var b strings.Builder
			Report(&b, "report", rs)
			t.Errorf("mistake %q: no failure says all of %q; its report:\n%s", m.Name, m.Says, b.String())
		}
	}
	EachCanFail(t, reference, runs)
}

// anySays reports whether one failed result's message holds every one of
// says.
func anySays(rs []Result, says []string) bool {
	for _, r := range rs {
		if r.Err == nil {
			continue
		}
		all := true
		for _, s := range says {
			all = all && strings.Contains(r.Err.Error(), s)
		}
		if all {
			return true
		}
	}
	return false
}

// LineOf is the line of file (a test file of the chapter, read from the
// directory the test runs in) that ends with marker: where a planted
// mistake is, the line its report must point at.
func LineOf(t *testing.T, file, marker string) string {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(src), "\n") {
		if strings.HasSuffix(l, marker) {
			return strconv.Itoa(i + 1)
		}
	}
	t.Fatalf("no line of %s ends with %q", file, marker)
	return ""
}
