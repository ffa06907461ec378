package exploring_test

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sync"

	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/sim/explore"
	"github.com/cachelab/cachelab/sim/scenario"
)

// A placement is a scenario's commands with a fault put in: here the
// lab's scenario with a disconnect before its step 3 and the reconnect
// before its step 6. Describe names the place by the scenario's steps,
// as explore's report does; Commands is the placed scenario a run plays.
func Example_placement() {
	sc, _ := sim.Load("exercise/lost-delete.txt")
	p := scenario.Placement{Faults: []scenario.PlacedFault{{Kind: "disconnect", At: 3, Heal: 6}}}
	fmt.Println(p.Describe(sc))
	for _, c := range p.Commands(sc) {
		fmt.Println("  ", c)
	}
	// Output:
	// disconnect before step 3 (start), reconnect before step 6 (create ns0/c)
	//    add-handler h1
	//    create ns0/a ns0/b
	//    disconnect
	//    start
	//    advance 1s
	//    delete ns0/b
	//    reconnect
	//    create ns0/c
	//    compact
}

// relist-after-compaction explored with the three faults explore places
// by default, in a seeded sample of 16 of the placements that can run.
func Example_relistAfterCompaction() {
	report(exploration("relist-after-compaction", explore.Options{Sample: 16, SampleSeed: 3}))
	// Output:
	// # cachelab explore relist-after-compaction · faults disconnect, close-watch, compact · up to 1 per run · server etcd
	// # 77 placements: 0 cannot stand where they are put, 6 cannot change anything (not run), 16 run (a sample, seed 3: 23% of the 71 that could); each compared with client-go at every step
	// # steps are numbered as in relist-after-compaction (a group's file numbers its own, its faults among them)
	//
	//      4  a relist's (or a resync's) unchanged update does not come
	//         shortest: disconnect before step 5 (disconnect), reconnect before step 6 (update ns0/a labels=(v=2))
	//      4  the same calls, some at a later step
	//         shortest: disconnect inside step 3 (start), after its first watch event, reconnect before step 4 (advance 1s)
	//      3  an object is first seen at a later version; a relist's (or a resync's) unchanged update does not come
	//         shortest: disconnect before step 1 (add-handler h1), reconnect before step 7 (create ns0/c)
	//      3  nothing visible
	//         shortest: compact before step 5 (disconnect)
	//      1  nothing visible to the handlers: the informer watched again
	//         shortest: close-watch inside step 3 (start), after its first watch event
	//      1  the same calls, some at an earlier step
	//         shortest: disconnect before step 8 (compact), reconnect before step 9 (reconnect)
}

// missed-delete-tombstone explored with a disconnect, in a seeded sample
// of 20 of the placements of one disconnect and its reconnect.
func Example_missedDelete() {
	rec := exploration("missed-delete-tombstone", explore.Options{Faults: []string{"disconnect"}, Sample: 20, SampleSeed: 3})
	report(rec)
	fmt.Println()
	g := group(rec, "a delete arrives as an event")
	fmt.Println(g.Outcomes[0].Placement + ":")
	show(g.Outcomes[0].Minimal, "sim", "reflector", "handler")
	// Output:
	// # cachelab explore missed-delete-tombstone · faults disconnect · up to 1 per run · server etcd
	// # 53 placements: 0 cannot stand where they are put, 0 cannot change anything (not run), 20 run (a sample, seed 3: 38% of the 53 that could); each compared with client-go at every step
	// # steps are numbered as in missed-delete-tombstone (a group's file numbers its own, its faults among them)
	//
	//      5  an object is never seen (it came and went while the informer could not look); a relist's (or a resync's) unchanged update does not come
	//         shortest: disconnect before step 3 (start), reconnect before step 7 (create ns0/c)
	//      5  the same calls, some at a later step
	//         shortest: disconnect before step 2 (create ns0/a ns0/b), reconnect before step 4 (advance 1s)
	//      3  a delete arrives as an event, where the run without the fault gets a tombstone; a relist's (or a resync's) unchanged update does not come
	//         shortest: disconnect before step 5 (disconnect), reconnect before step 7 (create ns0/c)
	//      3  nothing visible
	//         shortest: disconnect before step 1 (add-handler h1), reconnect before step 3 (start)
	//      2  the same calls, some at an earlier step
	//         shortest: disconnect before step 7 (create ns0/c), reconnect before step 9 (reconnect)
	//      1  a delete arrives as an event, where the run without the fault gets a tombstone; an unchanged object is delivered again as an update
	//         shortest: disconnect before step 4 (advance 1s), reconnect before step 6 (delete ns0/b)
	//      1  an unchanged object is delivered again as an update
	//         shortest: disconnect before step 4 (advance 1s), reconnect before step 5 (disconnect)
	//
	// disconnect before step 5 (disconnect), reconnect before step 7 (create ns0/c):
	// start
	//   reflector        replace: 2 objects, store at rv 3
	//   handler/h1       OnAdd    ns0/a@2 (initial list)
	//   handler/h1       OnAdd    ns0/b@3 (initial list)
	// advance 1s
	//   sim              clock +1s (now 1s)
	// disconnect
	//   sim              connection lost: watches dropped, new requests wait
	//   reflector        watch ended
	// disconnect
	//   sim              connection lost: watches dropped, new requests wait
	// reconnect
	//   sim              connection back
	//   handler/h1       OnDelete ns0/b@4
	// create ns0/c
	//   handler/h1       OnAdd    ns0/c@5
	// reconnect
	//   sim              connection back
}

// A group's shortest placement as a scenario file (its "minimal" file):
// written out, and replayed as `cachelab run FILE` replays it, every step
// checked against the output the file holds.
func Example_minimalFile() {
	rec := exploration("missed-delete-tombstone", explore.Options{Faults: []string{"disconnect"}, Sample: 20, SampleSeed: 3})
	g := group(rec, "an object is never seen")
	dir, _ := os.MkdirTemp("", "explore")
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "never-seen.txt")
	os.WriteFile(file, []byte(g.Outcomes[0].Minimal), 0o644)
	fmt.Print(g.Outcomes[0].Minimal)
	fmt.Println()
	replay(file)
	// Output:
	// # DeletedFinalStateUnknown after a missed delete.
	// # Explored: disconnect before step 3 (start), reconnect before step 7 (create ns0/c); steps numbered as in missed-delete-tombstone.
	// # Group: an object is never seen (it came and went while the informer could not look); a relist's (or a resync's) unchanged update does not come.
	// # Server: etcd
	//
	// add-handler h1
	// ----
	//
	// create ns0/a ns0/b
	// ----
	// etcd             create ns0/a@2
	// etcd             create ns0/b@3
	//
	// disconnect
	// ----
	// sim              connection lost: watches dropped, new requests wait
	//
	// start
	// ----
	// request          w1 WATCH-LIST rv="" match=NotOlderThan sendInitialEvents=true bookmarks timeout=[5m,10m)
	// request            -> waiting: disconnected
	//
	// advance 1s
	// ----
	// sim              clock +1s (now 1s)
	//
	// disconnect
	// ----
	// sim              connection lost: watches dropped, new requests wait
	//
	// delete ns0/b
	// ----
	// etcd             delete ns0/b@3 (at rv 4)
	//
	// reconnect
	// ----
	// sim              connection back
	// watch            w1 ADDED ns0/a@2
	// watch            w1 BOOKMARK rv 4 (initial events end)
	// reflector        replace: 1 object, store at rv 4
	// transform        ns0/a@2
	// transform        ns0/a@2
	// pop              ReplacedAll {rv 4: ns0/a@2} (initial list)
	// indexer          add    ns0/a@2
	// handler/h1       OnAdd    ns0/a@2 (initial list)
	// synced           informer HasSynced=true
	// synced           handler h1 HasSynced=true
	//
	// create ns0/c
	// ----
	// etcd             create ns0/c@5
	// watch            w1 ADDED ns0/c@5
	// transform        ns0/c@5
	// pop              Added    ns0/c@5
	// indexer          add    ns0/c@5
	// handler/h1       OnAdd    ns0/c@5
	//
	// compact
	// ----
	// etcd             compact: history before rv 5 is gone
	//
	// reconnect
	// ----
	// sim              connection back
	//
	// step 1 add-handler h1         ✓ as the file says
	// step 2 create ns0/a ns0/b     ✓ as the file says
	// step 3 disconnect             ✓ as the file says
	// step 4 start                  ✓ as the file says
	// step 5 advance 1s             ✓ as the file says
	// step 6 disconnect             ✓ as the file says
	// step 7 delete ns0/b           ✓ as the file says
	// step 8 reconnect              ✓ as the file says
	// step 9 create ns0/c           ✓ as the file says
	// step 10 compact                ✓ as the file says
	// step 11 reconnect              ✓ as the file says
	// client-go agreed at every step
}

// reconcile-tombstone (chapter 8) explored with a disconnect, in a seeded
// sample of 12: a controller reconciles, and nothing else listens.
func Example_reconcileTombstone() {
	rec := exploration("reconcile-tombstone", explore.Options{Faults: []string{"disconnect"}, Sample: 12, SampleSeed: 1})
	report(rec)
	fmt.Println()
	g := group(rec, "the controller reconciles differently")
	fmt.Println(g.Outcomes[0].Placement + ":")
	show(g.Outcomes[0].Minimal, "sim", "reflector", "reconcile")
	// Output:
	// # cachelab explore reconcile-tombstone · faults disconnect · up to 1 per run · server etcd
	// # 64 placements: 0 cannot stand where they are put, 0 cannot change anything (not run), 12 run (a sample, seed 1: 19% of the 64 that could); each compared with client-go at every step
	// # steps are numbered as in reconcile-tombstone (a group's file numbers its own, its faults among them)
	//
	//      7  the controller reconciles differently
	//         shortest: disconnect before step 3 (start-controller), reconnect before step 4 (delete ns0/a)
	//      3  nothing visible
	//         shortest: disconnect before step 2 (start), reconnect before step 3 (start-controller)
	//      1  the same calls, some at an earlier step
	//         shortest: disconnect before step 8 (create ns0/c), reconnect before step 10 (reconnect)
	//      1  the same calls, some earlier and some later
	//         shortest: disconnect before step 3 (start-controller), reconnect before step 9 (compact)
	//
	// disconnect before step 3 (start-controller), reconnect before step 4 (delete ns0/a):
	// start
	//   reflector        replace: 2 objects, store at rv 3
	// disconnect
	//   sim              connection lost: watches dropped, new requests wait
	//   reflector        watch ended: very short watch: reflector /v1, Kind=Pod: Unexpected watch close - watch lasted less than a second and no items received
	//   reflector        relist after backoff 1.578s
	// start-controller
	//   sim              a controller on each informer: 1 worker; reconciles read the cache and write nothing
	//   reconcile        ns0/a: read ns0/a@2 -> ok
	//   reconcile        ns0/b: read ns0/b@3 -> ok
	// reconnect
	//   sim              connection back
	//   reflector        replace: 2 objects, store at rv 3
	//   reconcile        ns0/a: read ns0/a@2 -> ok
	//   reconcile        ns0/b: read ns0/b@3 -> ok
}

// add-update-delete explored with a disconnect, with a known bug planted
// in cachelab's side (sim.Plants): its informer drops the tombstones a
// relist makes. The scenario never relists, so it passes with the bug;
// the placements that make it relist find it.
func Example_plantedBug() {
	rec := exploration("add-update-delete", explore.Options{Faults: []string{"disconnect"}, Run: sim.Options{Plant: "drop-relist-tombstones"}})
	for _, g := range rec.Groups() {
		mark := " "
		if g.Divergence {
			mark = "✗"
		}
		fmt.Printf("%s %2d  %s\n", mark, len(g.Outcomes), g.Label)
	}
	g := rec.Groups()[0]
	fmt.Println()
	fmt.Println(g.Outcomes[0].Placement + ":")
	fmt.Println(g.Outcomes[0].Diff)
	// Output:
	// ✗  2  client-go differs in layer handler/h1
	//    8  an object is never seen (it came and went while the informer could not look); an object is first seen at a later version
	//    6  the same calls, some at a later step
	//    4  an object is first seen at a later version
	//    3  nothing visible
	//    1  an unchanged object is delivered again as an update
	//    1  nothing visible to the handlers: the informer watched again
	//
	// disconnect before step 4 (update ns0/a labels=(app=api)), reconnect before step 6 (show store):
	// the reconnect put before step 6 (show store), layer handler/h1 (-cachelab +client-go):
	// diff cachelab client-go
	// --- cachelab
	// +++ client-go
	// @@ -1,1 +1,2 @@
	// +OnDelete DeletedFinalStateUnknown{ns0/b, last seen ns0/b@3}   [any order within: tombstones]
	//  OnUpdate ns0/a@2 -> ns0/a@4   [any order within: listed]
}

// The lab's scenario explored with a close-watch, unsharded and in two
// shards run at once, as two machines would run them: each shard runs
// the placements whose index is its own modulo 2, and the two records
// merge into the record the exploration makes unsharded.
func Example_shards() {
	opts := explore.Options{Faults: []string{"close-watch"}}
	whole := exploration("exercise/lost-delete.txt", opts)
	report(whole)
	shards := make([]explore.Record, 2)
	var wg sync.WaitGroup
	for i := range shards {
		opts := opts
		opts.Shard, opts.Shards = i, len(shards)
		wg.Go(func() { shards[i] = exploration("exercise/lost-delete.txt", opts) })
	}
	wg.Wait()
	for _, shard := range shards {
		fmt.Printf("shard %s ran %d of the %d placements\n", shard.Shard, len(shard.Outcomes), shard.Runnable)
	}
	merged, err := explore.Merge(shards)
	fmt.Println("merged:", err == nil, "· the same record as unsharded:", reflect.DeepEqual(merged, whole))
	// Output:
	// # cachelab explore lost-delete · faults close-watch · up to 1 per run · server etcd
	// # 9 placements: 0 cannot stand where they are put, 3 cannot change anything (not run), 6 run; each compared with client-go at every step
	// # steps are numbered as in lost-delete (a group's file numbers its own, its faults among them)
	//
	//      5  nothing visible to the handlers: the informer watched again
	//         shortest: close-watch inside step 3 (start), after its first watch event
	//      1  an unchanged object is delivered again as an update
	//         shortest: close-watch before step 4 (advance 1s)
	// shard 0/2 ran 3 of the 6 placements
	// shard 1/2 ran 3 of the 6 placements
	// merged: true · the same record as unsharded: true
}
