package trace_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/cachelab/cachelab/internal/schemacheck"
	"github.com/cachelab/cachelab/sim/trace"
)

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
	// A wire line's typed fields (each try: its watch, number, status
	// and Retry-After), a watch's ERROR with its status, and a world line
	// naming its lever.
	events = append(events,
		trace.Event{Layer: trace.LayerWire, Kind: trace.KindWire, Op: "GET", Watch: "w2", Try: 2, Status: 429, RetryAfter: "1", Detail: "w2 try 2 (after Retry-After: 1s) GET /api/v1/pods?watch=true 429 Too Many Requests (Retry-After: 1)"},
		trace.Event{Layer: trace.LayerWire, Kind: trace.KindWire, Op: "GET", Try: 1, Detail: "LIST GET /api/v1/pods failed: EOF"},
		trace.Event{Layer: trace.LayerWire, Kind: trace.KindWire, Op: "ERROR", Watch: "w2", Try: 1, Status: 200, Detail: "w2 ERROR 410 Expired came inside its 200 OK stream"},
		trace.Event{Layer: trace.LayerWatch, Kind: trace.KindEvent, Op: "ERROR", Watch: "w2", Status: 410, Detail: "ERROR 410 Expired: too old"},
		trace.Event{Layer: trace.LayerEtcd, Kind: trace.KindWorld, Op: trace.LeverCompact, RV: "5", Detail: "compact: history before rv 5 is gone"})
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
	// A cluster's header and its steps' wall time, and a replay's
	// header.
	onCluster := header()
	onCluster.Server, onCluster.Etcd, onCluster.Cluster = "cluster", "the cluster's", "https://127.0.0.1:6443 (context kind-kind, v1.34.0), namespace cachelab-x-1a2b3"
	replay := header()
	replay.Server, replay.Etcd, replay.Replay = "replay", "none: the server is a recording", "s.jsonl: recorded from https://127.0.0.1:6443 (12 lines; objects: metadata)"
	for _, hd := range []trace.Header{onCluster, replay} {
		var b bytes.Buffer
		w := trace.NewJSONWriter(&b, "both")
		mustWrite(t, w.Header(hd))
		mustWrite(t, w.Step(trace.StepResult{Index: 1, Pos: "x.txt:4", Cmd: "start", Took: 1500 * time.Microsecond,
			Sides: map[string][]trace.Event{trace.Cachelab: events, trace.ClientGo: events}}))
		sum := trace.Summary{Scenario: "x", Verdict: trace.VerdictAgreed, StepsTotal: 1, StepsRun: 1, WallTimeMs: 1234}
		sum.SetClock(time.Second)
		mustWrite(t, w.Summary(sum))
		if err := schemacheck.Stream(b.Bytes()); err != nil {
			t.Errorf("server %s: %v", hd.Server, err)
		}
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
		{"a wire line that does not say which try it is", `{"record":"event","step":1,"impl":"cachelab","layer":"wire","kind":"wire","op":"GET","status":200,"detail":"GET /api/v1/pods 200 OK"}`},
		{"a status that is no HTTP status", `{"record":"event","step":1,"impl":"cachelab","layer":"wire","kind":"wire","op":"GET","try":1,"status":0,"detail":"GET /api/v1/pods"}`},
	} {
		if err := schemacheck.Record([]byte(tc.line)); err == nil {
			t.Errorf("%s: the schema accepts %s", tc.why, tc.line)
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
