// Package scenario is a scenario as data: what a scenario file says, read
// and checked, before anything runs it. Package sim is the runner that
// plays a scenario against cachelab's informers and client-go's; package
// explore puts faults into scenarios and runs them through sim. This
// package knows neither: it imports no runner, no etcd, no client-go and
// no informer, so a reader can learn what a scenario may say here without
// reading how one runs.
//
//	sim/explore   places faults, runs each placement, tells its story
//	     │
//	     ▼
//	sim           the runner: levers, both sides, settling, comparison
//	     │
//	     ▼
//	sim/scenario  the file: Parse, the command table, the dry run that
//	              refuses steps that cannot run, placements and hints
//
// # A scenario file
//
// A scenario file is in cockroachdb's datadriven format. It opens with a
// "#" paragraph saying what it shows, with a "# Covers:" line naming the
// REFERENCE.md behaviours it covers (the scenario's IDs are that line's,
// each once: IDs the prose mentions are not covers); then come commands,
// each followed by "----" and the trace it is expected to print:
//
//	# A label selector turns "no longer matches" into a delete.
//	# Covers: E5 E6 P1 P2
//
//	add-handler h1
//	----
//
//	start labels=(app=web)
//	----
//	request          WATCH-LIST rv="" ... labels=app=web sendInitialEvents=true ...
//	...
//
// The commands act on the world (create, update [times=n], delete,
// bulk-create, put-raw, delete-raw, compact, progress, close-watch,
// disconnect, reconnect, fail-next [page=n], expire-continue,
// watch-list-lose, server,
// restart-etcd, etcd-snapshot, etcd-restore, etcd-wipe, etcd-cluster,
// etcd-stop-member, etcd-start-member, etcd-move-leader, advance, resync),
// on the informers (start, start-queue, stop, add-handler,
// remove-handler, release, pause, resume), on shared informer factories
// (factory, informer, factory-start, factory-wait), on the controllers
// (start-controller, reconcile-fail, reconcile-requeue), or look (show
// store|queue|handlers|requests|synced|metrics|workqueue). The command
// table (commands.go) says what each takes; CommandDocs lists them, with
// their help. What each does is the runner's: package sim keeps one run
// function per command, and a test there holds the two tables to the same
// names.
//
// The opening paragraph may say which kube-apiserver the informers talk
// to, on a line "# Server: <world>" (Scenario.Server): ServerWatchCache,
// kube-apiserver's watch cache in front of etcd, the default, as in a
// cluster; ServerEtcd, the watch cache off; or ServerAny, the scenario
// means the same in both. A scenario with no such line is written for the
// etcd world if it pulls one of that world's own levers (put-raw,
// delete-raw), and for the watch cache otherwise (Scenario.WrittenFor).
//
// It may also say, on a line "# Env: KUBE_WATCHLIST_INCONSISTENCY_DETECTOR=true"
// (Scenario.Detector, env.go), that the informers' process starts with
// client-go's data consistency detector on; package sim switches it on
// for both implementations.
//
// # What Parse refuses, and why
//
// A run takes seconds to minutes over a real etcd; a mistake found only
// while it runs costs that wait, ends the run halfway with an error that
// is not about informers, or worse, runs something other than what the
// file says. So Parse checks a file as a run would, and refuses it with
// file:line (ParseError) (validate.go, dryrun.go): names, namespaces and
// labels with apimachinery's validators and kube-apiserver's words,
// selectors with labels.Parse and fields.ParseSelector, ranges (stated in
// the message), no control characters, and each step against those
// before it (no update of an object never created, no second start, no
// handler that was never added, no restore of a snapshot not yet taken;
// a restore brings back the snapshot's objects, a wipe none; two
// "# Server:" lines; a lever of the other world; a cluster lever without
// etcd-cluster, or a stop that would leave no majority up). The dry run is
// exact because a run starts from an empty etcd that nothing else writes
// to. What depends on the run's options (--server, an external etcd,
// --etcd-members) is not the file's to say: package sim's Check refuses
// it, before anything starts, with MembersCheck's help for the etcd's
// size.
//
// # Placements: faults put into a scenario
//
// A Placement is the scenario with fault commands put between its steps
// (PlacedFault.At, and a heal at PlacedFault.Heal), or armed inside one
// (PlacedFault.After: disconnect or close-watch with after-events=N;
// PlacedFault.Page: disconnect with after-pages=N, between a paged LIST's
// pages): the levers a scenario pulls, at points its author did not
// choose.
// Placement.Text writes the placed scenario as a file, which Parse reads
// like any other, so a placed scenario is refused or run exactly as a
// hand-written one would be. FaultKinds are the faults that can be
// placed, with the world each needs; package explore enumerates
// placements of them. A scenario's "# Explore:" lines (ExploreHint, in
// hints.go) name placements worth running, with the story each should
// tell.
package scenario
