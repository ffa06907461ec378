package yourcontroller_test

import (
	"context"
	"fmt"

	"github.com/cachelab/cachelab/controllertest"
	"github.com/cachelab/cachelab/examples/fooctl"
)

// The mistaken operator, with no fault at all: the ConfigMap's event
// starts a reconcile before the Deployment's own event has come, and
// the Deployment, missing from the cache's list, is made again.
func Example_duplicate() {
	show(play(true, noFault), "create")
	// Output:
	// no faults: broke no-duplicates
	//   no-duplicates: after create foos ns0/f spec=(color=blue,replicas=2): deployments ns0/f-2v44j and ns0/f-crqfg are both controlled by Foo f: a child made twice
	// create foos ns0/f spec=(color=blue,replicas=2)
	//   event: ADDED foos.example.com ns0/f rv 4
	//   controller: POST /api/v1/namespaces/registry/configmaps 201
	//   controller: POST /api/v1/namespaces/ns0/configmaps 201
	//   controller: POST /apis/apps/v1/namespaces/ns0/deployments 201
	//   event: ADDED configmaps registry/ns0.f rv 5
	//   event: ADDED configmaps ns0/f-config rv 6
	//   controller: POST /api/v1/namespaces/registry/configmaps 409
	//   controller: POST /apis/apps/v1/namespaces/ns0/deployments 201
	//   event: ADDED deployments.apps ns0/f-2v44j rv 7
	//   controller: POST /api/v1/namespaces/registry/configmaps 409
	//   event: ADDED deployments.apps ns0/f-crqfg rv 8
	//   controller: POST /api/v1/namespaces/registry/configmaps 409
	//   controller: reconciled 4 keys
}

// The mistaken operator, partitioned from the server while the Foo is
// deleted: its informers learn of the delete at the relist, as a
// DeletedFinalStateUnknown, which its cleanup drops. (What the relist
// leads to is printed only in part: the reconciles its keys start race
// the informer that queues them, and a reconcile that is not idempotent,
// as this one is not, does not always do the same.)
func Example_tombstone() {
	o := play(true, partitionOverDelete)
	show(o, "delete")
	grep(o, "reconnect", "410", "sendInitialEvents")
	// Output:
	// partition before step 4 (delete foos ns0/f), heal at the end: broke no-duplicates, registered
	//   no-duplicates: after create foos ns0/f spec=(color=blue,replicas=2): deployments ns0/f-2v44j and ns0/f-crqfg are both controlled by Foo f: a child made twice
	//   registered: registration ns0.f is for a Foo that does not exist
	// delete foos ns0/f
	//   garbage collector: DELETE /api/v1/namespaces/ns0/configmaps/f-config 200
	//   garbage collector: DELETE /apis/apps/v1/namespaces/ns0/deployments/f-2v44j 200
	//   garbage collector: DELETE /apis/apps/v1/namespaces/ns0/deployments/f-crqfg 200
	// reconnect
	//   event: ERROR configmaps 410 Expired
	//   controller: GET /api/v1/configmaps?allowWatchBookmarks=true&resourceVersion=10&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&watch=true 200
	//   event: ERROR deployments.apps 410 Expired
	//   controller: GET /apis/apps/v1/deployments?allowWatchBookmarks=true&resourceVersion=8&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&watch=true 200
	//   event: ERROR foos.example.com 410 Expired
	//   controller: GET /apis/example.com/v1/foos?allowWatchBookmarks=true&resourceVersion=9&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&watch=true 200
}

// The mistaken operator stopped while the Foo is deleted: the operator
// that starts again lists a world with no Foo, and hears nothing of it.
func Example_stopped() {
	show(play(true, stopOverDelete), "stop", "delete", "start")
	// Output:
	// stop before step 4 (delete foos ns0/f), start at the end: broke no-duplicates, registered
	//   no-duplicates: after create foos ns0/f spec=(color=blue,replicas=2): deployments ns0/f-2v44j and ns0/f-crqfg are both controlled by Foo f: a child made twice
	//   registered: registration ns0.f is for a Foo that does not exist
	// stop
	// delete foos ns0/f
	//   garbage collector: DELETE /api/v1/namespaces/ns0/configmaps/f-config 200
	//   garbage collector: DELETE /apis/apps/v1/namespaces/ns0/deployments/f-2v44j 200
	//   garbage collector: DELETE /apis/apps/v1/namespaces/ns0/deployments/f-crqfg 200
	// start
	//   controller: GET /api/v1/configmaps?allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&watch=true 200
	//   controller: GET /apis/apps/v1/deployments?allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&watch=true 200
	//   controller: GET /apis/example.com/v1/foos?allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&watch=true 200
	//   event: ADDED configmaps registry/ns0.f rv 5
	//   event: BOOKMARK configmaps rv 14
	//   event: BOOKMARK deployments.apps rv 14
	//   event: BOOKMARK foos.example.com rv 14
}

// The mistaken operator explored with one fault, close-watch, at every
// gap of the story: the baseline, then five placements.
func Example_report() {
	e := explorer(true)
	e.Faults, e.Jobs = []string{"close-watch"}, 5
	rep, err := e.Run(context.Background())
	if err != nil {
		panic(err)
	}
	summary(rep)
	// Output:
	// explored story: the baseline and 5 placements
	// baseline (no faults): broke no-duplicates
	// 5 placements broke no-duplicates:
	//   - close-watch before step 1 (crd)
	//   - close-watch before step 2 (create foos ns0/f spec=(color=blue,replicas=2))
	//   - close-watch before step 3 (update foos ns0/f spec=(color=red))
	//   - close-watch before step 4 (delete foos ns0/f)
	//   - close-watch after the last step
}

// A run's file, replayed: the story with its fault written in, played
// with no further fault, is the same run, and breaks the same.
func Example_replay() {
	file := play(true, partitionOverDelete).File
	story, err := controllertest.ParseStory("partitioned.txt", []byte(file))
	if err != nil {
		panic(err)
	}
	e := explorer(true)
	e.Story = story
	o := e.Play(context.Background(), controllertest.Placement{})
	printFile(file)
	fmt.Println()
	fmt.Println("replayed:", verdict(o))
	// Output:
	// # A Foo is made, its color changed, and it is deleted, with faults: partition before step 4 (delete foos ns0/f), heal at the end.
	//
	// crd
	// (fooctl.CRD: 21 lines)
	// ----
	//
	// create foos ns0/f spec=(color=blue,replicas=2)
	// ----
	//
	// update foos ns0/f spec=(color=red)
	// ----
	//
	// disconnect
	// ----
	//
	// delete foos ns0/f
	// ----
	//
	// compact
	// ----
	//
	// restart-apiserver
	// ----
	//
	// reconnect
	// ----
	//
	// replayed: broke no-duplicates, registered
}

// The fixed operator, where the mistaken one broke something.
func Example_fixed() {
	for _, p := range []controllertest.Placement{noFault, partitionOverDelete, stopOverDelete} {
		o := play(false, p)
		fmt.Printf("%s: %s\n", o.Where, verdict(o))
	}
	fmt.Println()
	show(play(false, noFault), "create")
	fmt.Println()
	show(play(false, stopOverDelete), "delete", "start")
	// Output:
	// no faults: kept every invariant
	// partition before step 4 (delete foos ns0/f), heal at the end: kept every invariant
	// stop before step 4 (delete foos ns0/f), start at the end: kept every invariant
	//
	// no faults: kept every invariant
	// create foos ns0/f spec=(color=blue,replicas=2)
	//   event: ADDED foos.example.com ns0/f rv 4
	//   controller: PUT /apis/example.com/v1/namespaces/ns0/foos/f 200
	//   event: MODIFIED foos.example.com ns0/f rv 5
	//   controller: POST /api/v1/namespaces/registry/configmaps 201
	//   controller: POST /api/v1/namespaces/ns0/configmaps 201
	//   controller: POST /apis/apps/v1/namespaces/ns0/deployments 201
	//   event: ADDED configmaps registry/ns0.f rv 6
	//   event: ADDED configmaps ns0/f-config rv 7
	//   controller: POST /api/v1/namespaces/registry/configmaps 409
	//   controller: POST /apis/apps/v1/namespaces/ns0/deployments 409
	//   event: ADDED deployments.apps ns0/f rv 8
	//   controller: POST /api/v1/namespaces/registry/configmaps 409
	//   controller: reconciled 4 keys
	//
	// stop before step 4 (delete foos ns0/f), start at the end: kept every invariant
	// delete foos ns0/f
	// start
	//   controller: GET /api/v1/configmaps?allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&watch=true 200
	//   controller: GET /apis/apps/v1/deployments?allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&watch=true 200
	//   controller: GET /apis/example.com/v1/foos?allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&watch=true 200
	//   event: ADDED deployments.apps ns0/f rv 8
	//   event: ADDED configmaps ns0/f-config rv 10
	//   event: ADDED configmaps registry/ns0.f rv 6
	//   event: BOOKMARK configmaps rv 11
	//   event: BOOKMARK deployments.apps rv 11
	//   event: ADDED foos.example.com ns0/f rv 11
	//   event: BOOKMARK foos.example.com rv 11
	//   controller: DELETE /api/v1/namespaces/registry/configmaps/ns0.f 200
	//   controller: PUT /apis/example.com/v1/namespaces/ns0/foos/f 200
	//   event: DELETED configmaps registry/ns0.f rv 12
	//   event: DELETED foos.example.com ns0/f rv 13
	//   garbage collector: DELETE /api/v1/namespaces/ns0/configmaps/f-config 200
	//   garbage collector: DELETE /apis/apps/v1/namespaces/ns0/deployments/f 200
	//   event: DELETED configmaps ns0/f-config rv 14
	//   event: DELETED deployments.apps ns0/f rv 15
	//   controller: reconciled 4 keys
}

// fooctl.MistakenSweep, a handler of the children's events that deletes
// a child whose Foo its cache does not hold: after a stop over the
// update, the new controller hears of its children before their Foo.
func Example_sweep() {
	show(playVariant(fooctl.Variant{Sweep: true}, stopOverUpdate), "start")
	// Output:
	// stop before step 3 (update foos ns0/f spec=(color=red)), start before step 4 (delete foos ns0/f): broke kept
	//   kept: the controller deleted /api/v1/namespaces/ns0/configmaps/f-config, and made it again: the child of a Foo that was still there
	// start
	//   controller: GET /api/v1/configmaps?allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&watch=true 200
	//   controller: GET /apis/apps/v1/deployments?allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&watch=true 200
	//   controller: GET /apis/example.com/v1/foos?allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&watch=true 200
	//   event: ADDED configmaps ns0/f-config rv 7
	//   event: ADDED configmaps registry/ns0.f rv 6
	//   event: ADDED deployments.apps ns0/f rv 8
	//   event: BOOKMARK configmaps rv 9
	//   controller: DELETE /api/v1/namespaces/ns0/configmaps/f-config 200
	//   event: BOOKMARK deployments.apps rv 9
	//   controller: DELETE /apis/apps/v1/namespaces/ns0/deployments/f 200
	//   event: ADDED foos.example.com ns0/f rv 9
	//   event: BOOKMARK foos.example.com rv 9
	//   controller: POST /api/v1/namespaces/registry/configmaps 409
	//   controller: PUT /api/v1/namespaces/ns0/configmaps/f-config 404
	//   event: DELETED configmaps ns0/f-config rv 10
	//   controller: POST /api/v1/namespaces/registry/configmaps 409
	//   controller: POST /api/v1/namespaces/ns0/configmaps 201
	//   event: DELETED deployments.apps ns0/f rv 11
	//   controller: POST /api/v1/namespaces/registry/configmaps 409
	//   controller: POST /api/v1/namespaces/ns0/configmaps 409
	//   controller: POST /apis/apps/v1/namespaces/ns0/deployments 201
	//   event: ADDED configmaps ns0/f-config rv 12
	//   controller: POST /api/v1/namespaces/registry/configmaps 409
	//   controller: POST /apis/apps/v1/namespaces/ns0/deployments 409
	//   event: ADDED deployments.apps ns0/f rv 13
	//   controller: POST /api/v1/namespaces/registry/configmaps 409
	//   controller: reconciled 5 keys
}

// fooctl.Swallowing, which takes a conflict as someone else's write, in
// an operator whose predicate drops the event of its own finalizer
// write; and the fixed operator on the same story.
func Example_swallowed() {
	show(playVariant(fooctl.Variant{Status: true, Swallow: true}, noFault), "create")
	fmt.Println()
	o := playVariant(fooctl.Variant{Status: true}, noFault)
	fmt.Printf("the fixed operator, %s: %s\n", o.Where, verdict(o))
	// Output:
	// no faults: broke no-stale-writes, reported
	//   no-stale-writes: PUT /apis/example.com/v1/namespaces/ns0/foos/f/status was answered 409 Conflict after the controller's own write of it: a write from a stale read
	//   reported: Foo ns0/f is blue; its status says ""
	// create foos ns0/f spec=(color=blue,replicas=2)
	//   event: ADDED foos.example.com ns0/f rv 4
	//   controller: POST /api/v1/namespaces/registry/configmaps 201
	//   controller: POST /api/v1/namespaces/ns0/configmaps 201
	//   controller: POST /apis/apps/v1/namespaces/ns0/deployments 201
	//   controller: PUT /apis/example.com/v1/namespaces/ns0/foos/f 200
	//   controller: PUT /apis/example.com/v1/namespaces/ns0/foos/f/status 409
	//   event: ADDED configmaps registry/ns0.f rv 5
	//   event: ADDED configmaps ns0/f-config rv 6
	//   controller: POST /api/v1/namespaces/registry/configmaps 409
	//   controller: POST /apis/apps/v1/namespaces/ns0/deployments 409
	//   controller: PUT /apis/example.com/v1/namespaces/ns0/foos/f 409
	//   event: ADDED deployments.apps ns0/f rv 7
	//   controller: POST /api/v1/namespaces/registry/configmaps 409
	//   controller: PUT /apis/example.com/v1/namespaces/ns0/foos/f 409
	//   event: MODIFIED foos.example.com ns0/f rv 8
	//   controller: reconciled 3 keys
	//
	// the fixed operator, no faults: kept every invariant
}
