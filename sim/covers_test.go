package sim

import (
	"os"
	"regexp"
	"testing"
)

// Every built-in and regression scenario covers at least one behaviour,
// and each ID it covers is one REFERENCE.md defines.
func TestScenarioCoversAreReferenceIDs(t *testing.T) {
	defined := referenceIDs(t)
	for _, file := range allScenarioFiles(t) {
		sc, err := Load(file)
		if err != nil {
			t.Fatal(err)
		}
		if len(sc.IDs) == 0 {
			t.Errorf("%s: no \"# Covers:\" line naming the behaviours (REFERENCE.md) it shows", file)
		}
		for _, id := range sc.IDs {
			if !defined[id] {
				t.Errorf("%s covers %s, which REFERENCE.md does not define", file, id)
			}
		}
	}
}

var referenceID = regexp.MustCompile(`(?m)^- ([A-Z][0-9]{1,2}) `)

// referenceIDs are the behaviour IDs REFERENCE.md defines: each starts a
// list item ("- F5 A LIST failing ...").
func referenceIDs(t *testing.T) map[string]bool {
	t.Helper()
	src, err := os.ReadFile("../REFERENCE.md")
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, m := range referenceID.FindAllStringSubmatch(string(src), -1) {
		ids[m[1]] = true
	}
	if len(ids) < 100 {
		t.Fatalf("found %d IDs in REFERENCE.md; its list items changed shape", len(ids))
	}
	return ids
}
