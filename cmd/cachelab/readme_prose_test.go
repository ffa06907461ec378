package main

import (
	"os"
	"strings"
	"testing"

	"github.com/cachelab/cachelab/internal/rvclaims"
	"github.com/cachelab/cachelab/sim"
)

// docs/reading-a-trace.md reads the run of relist-after-compaction line by line; the
// resourceVersions it names, and the requests it says the reflector made
// at them, are in that scenario's trace (issue 27, case 13).
func TestReadmeReadsTheTraceItQuotes(t *testing.T) {
	readme, err := os.ReadFile("../../docs/reading-a-trace.md")
	if err != nil {
		t.Fatal(err)
	}
	_, reading, ok := strings.Cut(string(readme), "How to read it, line by line:")
	if !ok {
		t.Fatal(`docs/reading-a-trace.md has no "How to read it, line by line:"`)
	}
	reading, _, _ = strings.Cut(reading, "\n## ")
	sc, err := sim.Load("relist-after-compaction")
	if err != nil {
		t.Fatal(err)
	}
	var trace strings.Builder
	for _, st := range sc.Steps {
		trace.WriteString(st.Expected)
	}
	if len(rvclaims.Find(reading)) == 0 {
		t.Fatal("docs/reading-a-trace.md's reading of the run names no resourceVersion: this test checks nothing")
	}
	for _, p := range rvclaims.Check(reading, trace.String()) {
		t.Errorf("docs/reading-a-trace.md, how to read the run: %s", p)
	}
}
