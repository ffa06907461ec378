package failures_test

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/sim"
)

// lastStep runs a built-in scenario with cachelab and client-go side by
// side and prints what the handlers heard in its last step.
func lastStep(name string) {
	sc, err := sim.Load(name)
	if err != nil {
		panic(err)
	}
	res, err := sim.Run(context.Background(), sc, sim.Options{Seed: 1})
	if err != nil {
		panic(err)
	}
	last := res.Steps[len(res.Steps)-1]
	fmt.Println("last step:", last.Cmd)
	for _, l := range last.Sides["cachelab"] {
		if strings.HasPrefix(l.Layer, "handler/") {
			fmt.Println(" ", l.Layer, l.Text())
		}
	}
	fmt.Println("client-go agreed at every step:", res.Divergence == nil)
}

// onDelete is the shape every DeleteFunc needs: the object may be a
// tombstone holding the last state the informer saw.
func onDelete(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj // the last state seen; it may be stale
	}
	fmt.Println("deleted:", obj)
}

// A delete that happened while the informer was away, and whose event
// etcd has compacted, reaches the handler as a tombstone at the relist.
func Example_missedDelete() {
	lastStep("missed-delete-tombstone")
	// Output:
	// last step: reconnect
	//   handler/h1 OnDelete DeletedFinalStateUnknown{ns0/b, last seen ns0/b@3}
	//   handler/h1 OnUpdate ns0/a@2 -> ns0/a@2 (same object: a resync or relist)
	//   handler/h1 OnAdd    ns0/c@5
	// client-go agreed at every step: true
}

// A stale cache catches up when the connection comes back: the events it
// missed were still in etcd's history.
func Example_staleCache() {
	lastStep("stale-cache")
	// Output:
	// last step: show store
	// client-go agreed at every step: true
}
