package mermaid_test

import (
	"fmt"

	"github.com/cachelab/cachelab/sim/trace"
	"github.com/cachelab/cachelab/sim/trace/mermaid"
)

// One step of a run: an update travels from etcd, through
// kube-apiserver's watch cache and watch w1, to a handler, and client-go
// agreed.
func ExampleRender() {
	key := "ns0/a"
	r := mermaid.Run{
		Header: trace.Header{Scenario: "example", Title: "one update", Stack: "default", Server: "watchcache"},
		Steps: []trace.StepResult{{Index: 1, Pos: "example.txt:3", Cmd: "update ns0/a",
			World: []trace.Event{{Layer: "etcd", Kind: trace.KindWrite, Key: key, RV: "4", PrevRV: "2", Op: "update"}},
			Sides: map[string][]trace.Event{trace.Cachelab: {
				{Layer: "watch", Kind: trace.KindEvent, Key: key, RV: "4", Op: "MODIFIED", Watch: "w1"},
				{Layer: "transform", Kind: trace.KindEnqueue, Key: key, RV: "4", Detail: "ns0/a@4"},
				{Layer: "pop", Kind: trace.KindPop, Key: key, RV: "4", Op: "Updated", Detail: "ns0/a@4"},
				{Layer: "indexer", Kind: trace.KindStore, Key: key, RV: "4", PrevRV: "2", Op: "update", Detail: "ns0/a@2 -> ns0/a@4"},
				{Layer: "handler/h1", Kind: trace.KindCall, Key: key, RV: "4", PrevRV: "2", Handler: "h1", Op: "OnUpdate"},
			}}}},
	}
	fmt.Print(mermaid.Render(r, mermaid.Options{}))
	// Output:
	// %% cachelab  vs client-go  · scenario example: one update
	// %% stack default · seed 0 · server watchcache · etcd  · cachelab's events, client-go's verdict per step
	// sequenceDiagram
	//     participant etcd as etcd
	//     participant api as kube-apiserver (watch cache)
	//     participant refl as reflector
	//     participant queue as queue
	//     participant idx as indexer
	//     participant h0_h1 as handler h1
	//     Note over etcd,h0_h1: step 1 · update ns0/a · example.txt:3 · client-go ✓
	//     etcd->>api: update ns0/a@4
	//     api->>refl: w1 ns0/a@4 MODIFIED
	//     refl->>queue: ns0/a@4
	//     queue->>idx: ns0/a@4 Updated
	//     Note over idx: update ns0/a@2 -> ns0/a@4
	//     idx->>h0_h1: ns0/a@4 OnUpdate (was @2)
	//     Note over etcd,h0_h1: ✓ 1 step, client-go agreed at every step
}
