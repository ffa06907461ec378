package trace_test

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cachelab/cachelab/internal/schemacheck"
	"github.com/cachelab/cachelab/sim/trace"
)

// A run of two steps, the second diverging, written as the CLI writes
// it: a header, each step's events and verdict, the error record, the
// summary.
func ExampleJSONWriter() {
	w := trace.NewJSONWriter(os.Stdout, trace.Cachelab)
	_ = w.Header(trace.Header{Scenario: "x", Title: "X.", IDs: []string{"P1"}, Cachelab: "0.5.0", ClientGo: "v0.37.2",
		Stack: "default", FeatureGates: map[string]bool{}, Seed: 1, Server: "watchcache", Etcd: "embedded"})
	_ = w.Step(trace.StepResult{Index: 1, Pos: "x.txt:4", Cmd: "create ns0/a",
		World: []trace.Event{{Layer: trace.LayerEtcd, Kind: trace.KindWrite, Op: "create", Key: "ns0/a", UID: "uid-1", RV: "2", Detail: "create ns0/a@2"}}})
	d := &trace.Divergence{Step: 2, Pos: "x.txt:7", Cmd: "start", Layer: "handler/h1", Diff: "-OnAdd ns0/a\n"}
	_ = w.Step(trace.StepResult{Index: 2, Pos: d.Pos, Cmd: d.Cmd, Divergence: d, Sides: map[string][]trace.Event{
		trace.Cachelab: {{Layer: "handler/h1", Kind: trace.KindCall, Handler: "h1", Op: "OnAdd", Key: "ns0/a", RV: "2", Detail: "ns0/a@2"}}}})
	_ = w.Error(trace.Failure{Kind: trace.FailDivergence, Step: 2, Pos: d.Pos, Cmd: d.Cmd, Layer: d.Layer, Message: "client-go differs"})
	s := trace.Summary{Scenario: "x", Verdict: trace.VerdictDiverged, Exit: 1, StepsTotal: 3, WallTimeMs: 0}
	s.SetClock(90 * time.Second)
	_ = w.Summary(s)
	// Output:
	// {"record":"header","schema":2,"header":{"scenario":"x","title":"X.","ids":["P1"],"cachelab":"0.5.0","clientGo":"v0.37.2","stack":"default","featureGates":{},"seed":1,"server":"watchcache","etcd":"embedded"}}
	// {"record":"event","step":1,"impl":"world","layer":"etcd","kind":"write","key":"ns0/a","uid":"uid-1","rv":"2","op":"create","detail":"create ns0/a@2","text":"create ns0/a@2"}
	// {"record":"step","step":1,"pos":"x.txt:4","cmd":"create ns0/a","agree":true}
	// {"record":"event","step":2,"impl":"cachelab","layer":"handler/h1","kind":"call","key":"ns0/a","rv":"2","handler":"h1","op":"OnAdd","detail":"ns0/a@2","text":"OnAdd    ns0/a@2"}
	// {"record":"step","step":2,"pos":"x.txt:7","cmd":"start","agree":false,"diverged":"handler/h1","diff":"-OnAdd ns0/a\n"}
	// {"record":"error","schema":2,"kind":"divergence","step":2,"pos":"x.txt:7","cmd":"start","layer":"handler/h1","message":"client-go differs"}
	// {"record":"summary","schema":2,"scenario":"x","verdict":"diverged","exit":1,"stepsRun":2,"stepsTotal":3,"clock":"1m30s","clockMs":90000,"events":{"cachelab":{"handler/h1":1},"world":{"etcd":1}},"wallTimeMs":0}
}

// Every kind of record the writer makes, every event kind and every
// failure kind among them, validates against schema.json, and the
// streams keep SCHEMA.md's promises. (The built-in scenarios' records
// are validated where they run: sim's TestScenarios.)
func TestJSONRecordsMatchTheSchema(t *testing.T) {
	kinds := []trace.Kind{trace.KindWrite, trace.KindWorld, trace.KindRequest, trace.KindEvent, trace.KindWatchEnd, trace.KindReflector,
		trace.KindEnqueue, trace.KindPop, trace.KindSkip, trace.KindStore, trace.KindCall, trace.KindHandler, trace.KindSynced,
		trace.KindLog, trace.KindShow, trace.KindQueue, trace.KindNote}
	var events []trace.Event
	for _, k := range kinds {
		events = append(events, trace.Event{Layer: trace.LayerNote, Kind: k, Key: "ns0/a", Op: "op", Handler: "h1", Detail: string(k)})
	}
	events[10].Layer = trace.HandlerLayer("h1") // a call is a handler's
	fails := []struct {
		f    trace.Failure
		v    trace.Verdict
		exit int
	}{
		{trace.Failure{Kind: trace.FailUsage, Message: "no built-in scenario"}, trace.VerdictError, 2},
		{trace.Failure{Kind: trace.FailParse, Pos: "x.txt:4", Message: "x.txt:4: bad"}, trace.VerdictError, 2},
		{trace.Failure{Kind: trace.FailRun, Step: 1, Pos: "x.txt:4", Cmd: "restart-etcd", Message: "x"}, trace.VerdictError, 3},
		{trace.Failure{Kind: trace.FailDivergence, Step: 1, Pos: "x.txt:4", Cmd: "start", Layer: "indexer", Message: "x"}, trace.VerdictDiverged, 1},
		{trace.Failure{Kind: trace.FailUnexpected, Step: 1, Pos: "x.txt:4", Cmd: "start", Message: "x"}, trace.VerdictUnexpected, 1},
		{trace.Failure{Kind: trace.FailInterrupted, Step: 1, Message: "interrupted by SIGINT"}, trace.VerdictInterrupted, 130},
		{trace.Failure{Kind: trace.FailInternal, Message: "a bug"}, trace.VerdictError, 3},
	}
	for _, tc := range fails {
		t.Run(string(tc.f.Kind), func(t *testing.T) {
			var b bytes.Buffer
			w := trace.NewJSONWriter(&b, "both")
			if tc.f.Kind != trace.FailParse && tc.f.Kind != trace.FailUsage {
				mustWrite(t, w.Header(header()))
				mustWrite(t, w.Step(trace.StepResult{Index: 1, Pos: "x.txt:4", Cmd: "start", World: events,
					Sides: map[string][]trace.Event{trace.Cachelab: events, trace.ClientGo: events}}))
			}
			mustWrite(t, w.Error(tc.f))
			mustWrite(t, w.Summary(trace.Summary{Scenario: "x", Verdict: tc.v, Exit: tc.exit, StepsTotal: 2, WallTimeMs: 1234}))
			if err := schemacheck.Stream(b.Bytes()); err != nil {
				t.Error(err)
			}
		})
	}
}

// The schema says no where the records would mislead a tool.
func TestSchemaRejects(t *testing.T) {
	for _, tc := range []struct{ why, line string }{
		{"an unknown record", `{"record":"trace"}`},
		{"an event of an unknown kind", `{"record":"event","step":1,"impl":"cachelab","layer":"indexer","kind":"gossip","detail":""}`},
		{"an event in an unknown layer", `{"record":"event","step":1,"impl":"cachelab","layer":"informer","kind":"note","detail":""}`},
		{"a field the schema does not name", `{"record":"step","step":1,"pos":"x.txt:4","cmd":"start","agree":true,"wall":"1s"}`},
		{"a disagreeing step without its diff", `{"record":"step","step":1,"pos":"x.txt:4","cmd":"start","agree":false}`},
		{"a parse error without its file:line", `{"record":"error","schema":2,"kind":"parse","message":"bad"}`},
		{"a summary whose verdict and exit disagree", `{"record":"summary","schema":2,"scenario":"x","verdict":"agreed","exit":1,"stepsRun":0,"stepsTotal":0,"clock":"0s","clockMs":0,"events":{},"wallTimeMs":0}`},
		{"another schema version", `{"record":"header","schema":1,"header":{}}`},
	} {
		if err := schemacheck.Record([]byte(tc.line)); err == nil {
			t.Errorf("%s: the schema accepts %s", tc.why, tc.line)
		}
	}
}

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

func header() trace.Header {
	return trace.Header{Scenario: "x", Cachelab: "0.5.0", ClientGo: "v0.37.2", Stack: "default", FeatureGates: map[string]bool{"WatchListClient": true},
		Seed: 1, Server: "etcd", Etcd: "embedded"}
}

func mustWrite(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
