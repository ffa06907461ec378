package htmlview

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/cachelab/cachelab/sim/trace"
)

// loadRun reads a real run: testdata/NAME.jsonl is what
// `cachelab run NAME --impl both --output json` wrote (wallTimeMs zeroed),
// its records put back together as the Run the CLI had.
func loadRun(t testing.TB, name string) Run {
	t.Helper()
	f, err := os.Open("testdata/" + name + ".jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var (
		r    Run
		cur  *trace.StepResult
		dec  = json.NewDecoder(f)
		line = 0
	)
	for dec.More() {
		line++
		var rec struct {
			Record, Impl, Pos, Cmd, Diverged, Diff string
			Step                                   int
			Agree                                  bool
			Header                                 *trace.Header
			trace.Event
		}
		if err := dec.Decode(&rec); err != nil {
			t.Fatalf("testdata/%s.jsonl:%d: %v", name, line, err)
		}
		if cur == nil || cur.Index != rec.Step {
			r.Steps = append(r.Steps, trace.StepResult{Index: rec.Step, Sides: map[string][]trace.Event{trace.Cachelab: nil, trace.ClientGo: nil}})
			cur = &r.Steps[len(r.Steps)-1]
		}
		switch {
		case rec.Record == "header":
			r.Header, r.Steps = *rec.Header, nil
		case rec.Record == "event" && rec.Impl == trace.World:
			cur.World = append(cur.World, rec.Event)
		case rec.Record == "event":
			cur.Sides[rec.Impl] = append(cur.Sides[rec.Impl], rec.Event)
		case rec.Record == "step":
			cur.Pos, cur.Cmd = rec.Pos, rec.Cmd
			if !rec.Agree {
				cur.Divergence = &trace.Divergence{Step: rec.Step, Pos: rec.Pos, Cmd: rec.Cmd, Layer: rec.Diverged, Diff: rec.Diff}
			}
		}
	}
	if n := len(r.Steps); n > 0 && r.Steps[n-1].Pos == "" { // the summary's
		r.Steps = r.Steps[:n-1]
	}
	return r
}

// diverging is r with client-go's last handler call of step n altered,
// and the step's divergence set as the comparison would report it.
func diverging(t testing.TB, r Run, n int) Run {
	t.Helper()
	sr := &r.Steps[n-1]
	side := append([]trace.Event(nil), sr.Sides[trace.ClientGo]...)
	for i := len(side) - 1; i >= 0; i-- {
		if side[i].Kind == trace.KindCall {
			side[i].Op, side[i].Detail = "OnDelete", side[i].Key+"@"+side[i].RV
			sr.Sides = map[string][]trace.Event{trace.Cachelab: sr.Sides[trace.Cachelab], trace.ClientGo: side}
			sr.Divergence = &trace.Divergence{Step: n, Pos: sr.Pos, Cmd: sr.Cmd, Layer: side[i].Layer,
				Diff: fmt.Sprintf("- %s\n+ %s", sr.Sides[trace.Cachelab][len(sr.Sides[trace.Cachelab])-1].Text(), side[i].Text())}
			r.Steps = r.Steps[:n]
			return r
		}
	}
	t.Fatalf("step %d has no handler call on client-go's side", n)
	return r
}

// bulkRun is a run of n objects the shape of `bulk-create n=N`, start,
// disconnect, reconnect (a relist of them all): what a page must stay
// fast for. Each side has some 9n events. Like a scenario file's, its
// header names no behaviour IDs (nil).
func bulkRun(n int) Run {
	key := func(i int) string { return fmt.Sprintf("ns0/obj-%05d", i) }
	rv := func(i int) string { return fmt.Sprint(i + 2) }
	r := Run{Header: trace.Header{Scenario: "bulk", Title: fmt.Sprintf("%d objects", n), Stack: "default", Server: "etcd", Etcd: "embedded"}}
	last := rv(n - 1)
	step := func(cmd string, world []trace.Event, side func(relist bool) []trace.Event, relist bool) {
		sr := trace.StepResult{Index: len(r.Steps) + 1, Pos: fmt.Sprintf("bulk.txt:%d", 2+3*len(r.Steps)), Cmd: cmd, World: world,
			Sides: map[string][]trace.Event{trace.Cachelab: nil, trace.ClientGo: nil}}
		if side != nil {
			sr.Sides[trace.Cachelab], sr.Sides[trace.ClientGo] = side(relist), side(relist)
		}
		r.Steps = append(r.Steps, sr)
	}
	list := func(relist bool) []trace.Event {
		w := "w1"
		if relist {
			w = "w2"
		}
		out := []trace.Event{{Layer: trace.LayerRequest, Kind: trace.KindRequest, Op: "WATCH-LIST", Watch: w, Detail: w + ` WATCH-LIST rv="" sendInitialEvents=true`}}
		for _, l := range []struct {
			layer string
			kind  trace.Kind
			op    string
			times int
		}{{trace.LayerWatch, trace.KindEvent, "ADDED", 1}, {trace.LayerTransform, trace.KindEnqueue, "", 2},
			{trace.LayerIndexer, trace.KindStore, "add", 1}, {trace.HandlerLayer("h1"), trace.KindCall, "OnAdd", 1}} {
			for t := 0; t < l.times; t++ {
				for i := 0; i < n; i++ {
					e := trace.Event{Layer: l.layer, Kind: l.kind, Key: key(i), RV: rv(i), Op: l.op, Detail: key(i) + "@" + rv(i)}
					switch {
					case l.kind == trace.KindEvent:
						e.Watch, e.Detail, e.Initial = w, "ADDED "+e.Detail, true
					case l.kind == trace.KindCall && relist:
						e.Op, e.PrevRV, e.Detail = "OnUpdate", e.RV, e.Detail+" -> "+e.Detail+" (same object: a resync or relist)"
					case l.kind == trace.KindCall:
						e.Handler, e.UID, e.Detail = "h1", fmt.Sprintf("uid-%d", i+1), e.Detail+" (initial list)"
					}
					if relist && l.kind == trace.KindStore {
						continue // nothing changed
					}
					out = append(out, e)
				}
			}
		}
		return append(out, trace.Event{Layer: trace.LayerSynced, Kind: trace.KindSynced, Detail: "informer HasSynced=true"})
	}
	step("add-handler h1", nil, nil, false)
	step(fmt.Sprintf("bulk-create n=%d", n), []trace.Event{{Layer: trace.LayerEtcd, Kind: trace.KindWorld,
		Detail: fmt.Sprintf("created %d objects %s..%s (etcd at rv %s)", n, key(0), key(n-1), last)}}, nil, false)
	step("start", nil, list, false)
	step("disconnect", []trace.Event{{Layer: trace.LayerSim, Kind: trace.KindWorld, Detail: "connection lost: watches dropped, new requests wait"}}, nil, false)
	step("reconnect", []trace.Event{{Layer: trace.LayerSim, Kind: trace.KindWorld, Detail: "connection back"}}, list, true)
	return r
}

// bulkPage is the page of bulkRun(10000) and the run's number of events,
// made once for the tests that need it: under -race, making it takes
// seconds.
var bulkPage = sync.OnceValues(func() ([]byte, int) {
	r := bulkRun(10000)
	events := 0
	for _, sr := range r.Steps {
		events += len(sr.World) + len(sr.Sides[trace.Cachelab]) + len(sr.Sides[trace.ClientGo])
	}
	var b bytes.Buffer
	if err := Write(&b, r); err != nil {
		panic(err) // a bug: Write fails only for a writer that does
	}
	return b.Bytes(), events
})
