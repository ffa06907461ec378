package trace_test

import (
	"fmt"
	"os"
	"time"

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

// A step shown to a person on a 60-column terminal: the handler's 12
// calls, over the limit of 8, are shown as their first five and a line
// that counts the rest; the long etcd line wraps under its text.
func ExampleWriteStep() {
	sr := trace.StepResult{Index: 2, Pos: "x.txt:7", Cmd: "start",
		World: []trace.Event{{Layer: trace.LayerEtcd, Kind: trace.KindWorld, Detail: "created 12 objects bulk/obj-01..bulk/obj-12 (etcd at rv 13)"}},
		Sides: map[string][]trace.Event{trace.Cachelab: nil}}
	for i := 1; i <= 12; i++ {
		key := fmt.Sprintf("bulk/obj-%02d", i)
		sr.Sides[trace.Cachelab] = append(sr.Sides[trace.Cachelab], trace.Event{Layer: "handler/h", Kind: trace.KindCall,
			Handler: "h", Op: "OnAdd", Key: key, Detail: fmt.Sprintf("%s@%d (initial list)", key, i+1)})
	}
	trace.WriteStep(os.Stdout, sr, trace.TextStyle{Impl: trace.Cachelab, Summarize: 8, Width: 60})
	// Output:
	// ── step 2: start  (x.txt:7)
	//   etcd             created 12 objects
	//                    bulk/obj-01..bulk/obj-12 (etcd at rv 13)
	//   handler/h        OnAdd    bulk/obj-01@2 (initial list)
	//   handler/h        OnAdd    bulk/obj-02@3 (initial list)
	//   handler/h        OnAdd    bulk/obj-03@4 (initial list)
	//   handler/h        OnAdd    bulk/obj-04@5 (initial list)
	//   handler/h        OnAdd    bulk/obj-05@6 (initial list)
	//   handler/h        … 7 more handler/h lines like these (7
	//                    objects)
	//   ✓ client-go agrees
}
