package schemacheck_test

import (
	"fmt"
	"strings"
	"testing"

	"encoding/json"
	"github.com/cachelab/cachelab/internal/schemacheck"
	"github.com/cachelab/cachelab/sim/explore"
	"github.com/cachelab/cachelab/sim/scenario"
)

// Streams that break SCHEMA.md's promises, though each record is valid.
func TestStreamRules(t *testing.T) {
	sum := func(verdict string, exit, ran int) string {
		return fmt.Sprintf(`{"record":"summary","schema":2,"scenario":"x","verdict":%q,"exit":%d,"stepsRun":%d,"stepsTotal":2,"events":{},"wallTimeMs":0}`, verdict, exit, ran)
	}
	step := func(n int) string {
		return fmt.Sprintf(`{"record":"step","step":%d,"pos":"x.txt:4","cmd":"start","agree":true}`, n)
	}
	hdr := `{"record":"header","schema":2,"header":{"scenario":"x","title":"","ids":[],"cachelab":"0","clientGo":"v","stack":"default","featureGates":{},"seed":1,"server":"etcd","etcd":"embedded"}}`
	errRec := `{"record":"error","schema":2,"kind":"run","message":"x"}`
	for _, tc := range []struct {
		why   string
		lines []string
	}{
		{"no summary", []string{hdr, step(1)}},
		{"a failed run without an error record", []string{hdr, sum("error", 3, 0)}},
		{"an error record in a run that agreed", []string{hdr, errRec, sum("stopped", 0, 0)}},
		{"steps out of order", []string{hdr, step(2), sum("stopped", 0, 1)}},
		{"a summary miscounting the steps", []string{hdr, step(1), sum("stopped", 0, 2)}},
		{"a step before the header", []string{step(1), hdr, sum("stopped", 0, 1)}},
	} {
		if err := schemacheck.Stream([]byte(strings.Join(tc.lines, "\n"))); err == nil {
			t.Errorf("%s: Stream accepts it", tc.why)
		}
	}
}

// A divergence in the calls after the last step: a step record one past
// the last, just before the error record.
func TestStreamLateDivergence(t *testing.T) {
	hdr := `{"record":"header","schema":2,"header":{"scenario":"x","title":"","ids":[],"cachelab":"0","clientGo":"v","stack":"default","featureGates":{},"seed":1,"server":"etcd","etcd":"embedded"}}`
	step := `{"record":"step","step":1,"pos":"x.txt:4","cmd":"start","agree":true}`
	late := `{"record":"step","step":2,"pos":"x.txt","cmd":"(after the last step)","agree":false,"diverged":"late calls","diff":"+x"}`
	errRec := `{"record":"error","schema":2,"kind":"divergence","step":2,"pos":"x.txt","cmd":"(after the last step)","layer":"late calls","message":"x"}`
	sum := `{"record":"summary","schema":2,"scenario":"x","verdict":"diverged","exit":1,"stepsRun":1,"stepsTotal":1,"events":{},"wallTimeMs":0}`
	if err := schemacheck.Stream([]byte(strings.Join([]string{hdr, step, late, errRec, sum}, "\n"))); err != nil {
		t.Errorf("a late divergence: %v", err)
	}
	if err := schemacheck.Stream([]byte(strings.Join([]string{hdr, late, step, errRec, sum}, "\n"))); err == nil {
		t.Error("Stream accepts a late divergence before the last step")
	}
}

// An explore record with every field a run can fill validates against
// explore.Schema; one with a field the schema does not name, or a
// fault kind explore does not place, does not.
func TestExploreRecordSchema(t *testing.T) {
	rec := explore.Record{Schema: explore.SchemaVersion, Scenario: "missed-delete-tombstone", Server: "etcd", Stack: "classic", Seed: 1,
		Faults: []string{"disconnect", "compact"}, MaxFaults: 2, BetweenSteps: true, Plant: "drop-relist-tombstones", Placements: 10, Refused: 1, Inert: 2, Runnable: 7, Sampled: 3, SampleSeed: 9,
		Shard: "1/2", Outcomes: []explore.OutcomeRecord{{Index: 4, Faults: []scenario.PlacedFault{{Kind: "disconnect", At: 3, Heal: 6}, {Kind: "compact", At: 5}},
			Placement: "disconnect before step 3 (start), reconnect before step 6 (delete ns0/b)", Group: "client-go differs in layer handler/h1", Stories: []string{"divergence"}, Divergence: true, Broken: true,
			Minimal: "add-handler h1\n----\n", Diff: "step 6: ..."}}}
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	if err := schemacheck.Document(explore.Schema, b); err != nil {
		t.Fatalf("a full record does not validate: %v\n%s", err, b)
	}
	for _, bad := range []string{
		strings.Replace(string(b), `"seed":1`, `"seed":1,"extra":true`, 1),
		strings.Replace(string(b), `"kind":"compact"`, `"kind":"compaction"`, 1),
		strings.Replace(string(b), `"schema":1`, `"schema":2`, 1),
		strings.Replace(string(b), `"shard":"1/2"`, `"shard":"half"`, 1),
		strings.Replace(string(b), `"stories":["divergence"]`, `"stories":["unknown"]`, 1),
		strings.Replace(string(b), `"plant":"drop-relist-tombstones"`, `"plant":""`, 1),
	} {
		if bad == string(b) {
			t.Fatalf("the test's replacement did not apply to %s", b)
		}
		if err := schemacheck.Document(explore.Schema, []byte(bad)); err == nil {
			t.Errorf("validates, but should not:\n%s", bad)
		}
	}
}
