package explore

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/cachelab/cachelab/sim"
)

// stepRE is a step named in a report: "step 5 (delete ns0/b)".
var stepRE = regexp.MustCompile(`\bstep (\d+) \(([^()]*(?:\([^()]*\)[^()]*)*)\)`)

// The report numbers steps one way, the explored scenario's, and says so:
// its placements did, but a divergence's "how:" counted the steps of the
// placed file, whose faults are steps too ("step 7 (reconnect)" in a
// scenario of 6 steps whose reconnect was put before step 6), in the text
// and in the JSON record alike (issue 47, case 14).
func TestStepNumbersAreTheScenarios(t *testing.T) {
	sc, ex := exploreSmall(t, Options{Faults: []string{"disconnect"}, Jobs: 2, Run: sim.Options{Plant: "drop-relist-tombstones"}})
	rec := ex.Record()
	var report bytes.Buffer
	rec.WriteReport(&report, map[int]string{})
	js, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	if want := "steps are numbered as in add-update-delete"; !strings.Contains(report.String(), want) {
		t.Errorf("the report does not say which steps it numbers (%q):\n%s", want, report.String())
	}
	var record struct{ Outcomes []OutcomeRecord }
	if err := json.Unmarshal(js, &record); err != nil {
		t.Fatal(err)
	}
	diffs := 0
	for _, o := range record.Outcomes {
		if o.Diff != "" {
			diffs++
			if !strings.HasPrefix(o.Diff, "the reconnect put ") {
				t.Errorf("a divergence at the reconnect explore put in is not named as such: %.100q", o.Diff)
			}
		}
	}
	if diffs == 0 {
		t.Fatal("no divergence: the test checks no how: line")
	}
	for where, text := range map[string]string{"the report": report.String(), "the JSON record": string(js)} {
		for _, m := range stepRE.FindAllStringSubmatch(text, -1) {
			n, _ := strconv.Atoi(m[1])
			if n < 1 || n > len(sc.Steps) || sc.Steps[n-1].Text != m[2] {
				t.Errorf("%s names %q, which is not a step of add-update-delete", where, m[0])
			}
		}
	}
}
