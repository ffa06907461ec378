package lab

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// The sheet's columns line up whatever the widths: an ID list longer
// than four characters ("E7 F4 P3", chapter 9's) or a behaviour longer
// than the rest (counted in runes: "·" is two bytes) does not push its
// status out of the status column, and a reason sits under its behaviour
// (issue 47).
func TestReportAlignsAnyWidth(t *testing.T) {
	rs := []Result{
		{Check: Check{ID: "S1", Behaviour: "base·2^n, in runes"}},
		{Check: Check{ID: "E7 F4 P3", Behaviour: "an ID list of eight characters"}, Err: errors.New("why, line one\nline two")},
		{Check: Check{ID: "F1 P3", Behaviour: "a behaviour longer than the fifty-two columns that were kept for one"}},
	}
	var sheet strings.Builder
	Report(&sheet, "title", rs)
	lines := strings.Split(strings.TrimSuffix(sheet.String(), "\n"), "\n")
	want := []struct{ id, behaviour, status string }{
		{"S1", "base·2^n, in runes", "pass"}, {"E7 F4 P3", "an ID list of eight characters", "FAIL"}, {"F1 P3", rs[2].Behaviour, "pass"},
	}
	rows := []string{lines[1], lines[2], lines[5]}
	statusCol, behaviourCol := -1, -1
	for i, row := range rows {
		if !strings.HasPrefix(row, "  "+want[i].id+" ") || !strings.HasSuffix(row, " "+want[i].status) {
			t.Fatalf("row %d is %q, want %q ... %q", i, row, want[i].id, want[i].status)
		}
		b, s := strings.Index(row, want[i].behaviour), utf8.RuneCountInString(row)-len(want[i].status)
		if statusCol == -1 {
			statusCol, behaviourCol = s, b
		}
		if s != statusCol || b != behaviourCol {
			t.Errorf("row %q: behaviour at column %d, status at %d; want %d and %d, as in the first row\n%s", row, b, s, behaviourCol, statusCol, sheet.String())
		}
	}
	for _, reason := range lines[3:5] {
		if got := len(reason) - len(strings.TrimLeft(reason, " ")); got != behaviourCol+2 {
			t.Errorf("reason %q is indented %d, want %d (under its behaviour, and in)\n%s", reason, got, behaviourCol+2, sheet.String())
		}
	}
	if lines[6] != "2 of 3 behaviours match client-go." {
		t.Errorf("last line %q", lines[6])
	}
}

// Chapter 10's lab has invariants to keep at each placement, and nothing
// to match: its sheet ends by counting the placements that kept them.
func TestReportInvariantsCountsPlacements(t *testing.T) {
	rs := []Result{
		{Check: Check{ID: "K2 E2", Behaviour: "no fault"}},
		{Check: Check{ID: "P3", Behaviour: "a partition over the delete"}, Err: errors.New("broke registered")},
	}
	var sheet strings.Builder
	ReportInvariants(&sheet, "title", rs)
	lines := strings.Split(strings.TrimSuffix(sheet.String(), "\n"), "\n")
	if got, want := lines[len(lines)-1], "1 of 2 placements keep every invariant."; got != want {
		t.Errorf("last line %q, want %q\n%s", got, want, sheet.String())
	}
}
