package sim_test

import (
	"context"
	"fmt"

	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/sim/scenario"
	"github.com/cachelab/cachelab/sim/trace"
)

// A scenario from a string: an object, an informer on the classic stack,
// an update. Each step prints what it did to etcd and cachelab's trace;
// client-go ran beside it and agreed at every step. The scenario says no
// "# Server:", so the informers talk to kube-apiserver's watch cache, as
// in a cluster: it answered the LIST.
func Example() {
	sc, err := scenario.Parse("example.txt", []byte(`# An update, end to end, on the classic stack.

add-handler h1
----

create ns0/a
----

start stack=classic
----

update ns0/a labels=(v=2)
----
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := sim.Run(context.Background(), sc, sim.Options{Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, st := range res.Steps[2:] {
		fmt.Printf("%s\n%s", st.Cmd, trace.StepOutput(st))
	}
	fmt.Println("divergence:", res.Divergence)
	// Output:
	// start stack=classic
	// request          LIST rv=0 limit=500
	// request            -> 1 items, rv 2 (from cache)
	// request          w1 WATCH rv=2 bookmarks timeout=[5m,10m)
	// reflector        replace: 1 object, store at rv 2
	// transform        ns0/a@2
	// pop              Replaced ns0/a@2 (initial list)
	// indexer          add    ns0/a@2
	// handler/h1       OnAdd    ns0/a@2 (initial list)
	// synced           informer HasSynced=true
	// synced           handler h1 HasSynced=true
	// update ns0/a labels=(v=2)
	// etcd             update ns0/a@2 -> ns0/a@3 labels=v=2
	// watch            w1 MODIFIED ns0/a@3
	// transform        ns0/a@3
	// pop              Updated  ns0/a@3
	// indexer          update ns0/a@2 -> ns0/a@3
	// handler/h1       OnUpdate ns0/a@2 -> ns0/a@3
	// divergence: <nil>
}
