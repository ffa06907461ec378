// Package sim runs scenarios: scripts of things that happen to etcd and to
// informers, played against cachelab's stack and client-go's side by side
// over one real (embedded) etcd, with a trace of every step and a
// comparison of the two after each one.
//
// # The parts
//
//	sim          the runner: settling, the comparison after each step,
//	   │         invariants; the run's world as a type it asks (worlds.go:
//	   │         etcd, the watch cache, HTTPS, a cluster, a replay, each
//	   │         a file of its own); each command as a lever value
//	   │         (levers.go, runs.go) given the part of the world it acts on
//	   ├──▶ sim/scenario  a scenario as data: Parse, the command table,
//	   │        │         the dry run that refuses what cannot run, placements
//	   │        └──▶ sim/lever  what each command acts on, and so which
//	   │                        worlds have it (Available)
//	   ├──▶ sim/world   each informer's connection and its levers
//	   │         │      (disconnect, fail-next, close-watch, holds)
//	   └──▶ sim/trace ◀─┘ typed events, their order rules, and their
//	                    renderings (text, JSON)
//
// Dependencies run one way, down the picture: lever knows nothing else of
// cachelab's; scenario knows no runner;
// trace knows no runner and no connection; world knows no scenario and no
// informer.
//
// # A scenario
//
// A scenario file (package scenario: its form, its commands, and what
// Parse refuses and why) is a "#" paragraph saying what it shows and the
// REFERENCE.md behaviours it covers, then commands, each followed by
// "----" and the trace it is expected to print. Run plays a parsed
// scenario: for each step it pulls the command's lever (runs.go, one for
// each command of scenario's table, given the part of the world it acts
// on: levers.go), settles both sides and compares them.
//
// # Exploring
//
// A scenario.Placement is the scenario as data with fault commands put
// between its steps, or armed inside one: the levers a scenario pulls,
// at points its author did not choose, in a file scenario.Parse reads
// like any other. Package explore (sim/explore) runs a scenario once
// without faults and once per placement, each an ordinary Run compared
// with client-go, and tells each run's story against the one without
// faults; it uses this package's API (Run, Result) and package
// scenario's, and nothing inside either. A run tells Options.OnRealWait
// of each wait it makes on the real clock (a relist backoff, below), so
// that explore runs another placement meanwhile. A scenario's "# Explore:" lines
// (scenario.ExploreHint) name placements worth running. A planted bug (plants.go, Options.Plant) puts a known bug into
// cachelab's side, for the comparison, and explore, to find.
//
// A fault inside a step is a lever armed for the next step
// (connlevers.go): disconnect or close-watch with after-events=N. Each
// informer's connection counts the watch events it hands over in that
// step and ends its watches right after the N-th (world.Conn.CutAfter),
// so both implementations are cut after the same event. disconnect
// after-pages=N drops it right after the N-th LIST page with more to
// come (world.Conn.CutAfterPages), between a paged LIST's pages.
//
// # Several informers: factories
//
// start runs one informer on each side. A scenario may instead (or as
// well) make shared informer factories (factories.go): factory NAME makes
// one on each side, cachelab's factory/ and client-go's
// informers.SharedInformerFactory; informer NAME [RESOURCE] asks it for
// its informer of a resource, pods unless named (the first request makes
// it, a later one gets the same);
// factory-start NAME is its Start, which runs what was asked for since
// the last one; factory-wait NAME is what its WaitForCacheSync returns.
// add-handler and start-controller take informer=NAME, and controllers
// a name= each when there are several, so two controllers can share one
// informer, or each have its own factory. Each informer is a pair of
// sides, with its own connection, recorder, settling and invariants; its
// lines carry its name (trace.Event.Informer: "a/pods: w1 WATCH-LIST
// ..."), start's none, and a step's lines are compared informer by
// informer, start's first. A factory makes one informer per resource,
// each keyed as its own factory keys it (cachelab's by GVR, client-go's
// typed factory by the Go type of its objects); a run has at most three
// factories and eight informers in all (scenario.MaxInformers).
//
// # Several resources
//
// The world serves pods, configmaps, secrets and deployments
// (scenario.Resources), each under its own etcd prefix and, behind the
// watch cache, with its own cacher (kubeapi.go). A write names its
// resource first (create configmaps ns0/cfg data=(k=v)), start takes
// informer=<resource>; what a write makes of an object is objects.go's,
// where it goes the world's (runWorld.writer). Objects may carry
// finalizers, which hold a deleted object until an update removes the
// last (listwatch's Writer, REFERENCE.md E18), and an owner, whose
// absence gc, the garbage collector's sweep, turns into the dependent's
// deletion (gc.go, E19). A crd step defines a custom resource
// (customres.go, E20): it is kept under /registry/<group>/<plural>, has
// a cacher of its own behind the watch cache, is served over HTTPS in
// its group version, and each write of it goes through what
// kube-apiserver's apiextensions does to one (package crd, linked in by
// sim/full). A cluster serves pods, configmaps and secrets, in the
// run's namespace (lever.CoreObjects), with finalizers; a replay the
// resource it recorded (recording.Resources).
// The built-in scenarios (Catalog) live in scenarios/; `go test ./sim` runs
// each with expected output, and `go test ./sim -run TestScenarios
// -rewrite` refreshes that output. Scenarios that once failed (most found
// by FuzzRunner) live in testdata/regress and are run the same way.
//
// scenario.Parse checks a file as a run would, so that a mistake costs no
// wait (package scenario says what it refuses). What depends on the
// run's options, Check refuses before
// anything starts (Open calls it first), with the step's file:line: a
// lever of the other world (Options.Server), a lever that needs the
// embedded etcd on an external one (restart-etcd, etcd-snapshot,
// etcd-restore, etcd-wipe, the cluster levers), compact on an external
// etcd unless Options.CompactExternalEtcd allows it (etcd's compaction is
// global: it would discard other applications' history too), and a lever
// the etcd of Options.EtcdMembers cannot pull. No step is refused
// halfway for a reason known before the run.
//
// Whether a world has a lever is the lever's own answer: package
// sim/lever says what each command acts on (the embedded etcd, etcd's
// whole history, the run's own watch cache, a live server...) and which
// of those each world has (WorldOf makes a run's options a world). The
// file's check, Check, the runner's guard at the step and explore's
// choice of faults ask it; each says no in its own words (LeverAllows
// for a run's).
//
// # Two worlds: kube-apiserver with and without its watch cache
//
// A scenario's opening comment says which kube-apiserver its informers
// talk to, on a line "# Server: <world>" (scenario.Scenario.Server; `cachelab run
// --server` and Options.Server override it):
//
//	watchcache  kube-apiserver's own storage layer, k8s.io/apiserver's
//	            cacher in front of its etcd3 store (apistorage, C1-C7):
//	            one, shared by both informers as one kube-apiserver
//	            serves every controller; the default, as in a cluster
//	etcd        the watch cache off: every LIST and WATCH reads etcd
//	            (listwatch, cachelab's own, E1-E15)
//	any         means the same in both; its expected output is for the
//	            default world, and go test runs it in the other too,
//	            compared with client-go (TestScenariosInTheOtherWorld)
//
// A scenario with no such line runs in the etcd world if it pulls one of
// that world's own levers (put-raw, delete-raw), and behind the watch
// cache otherwise (scenario.Scenario.WrittenFor).
//
// In the watch-cache world LIST answers say "(from cache)" or "(from
// etcd)", and bookmarks the cache sends on its own clock say so, with the
// time. Its levers are hold-cache and release-cache (the cache falls
// behind etcd, and catches up) and restart-apiserver (a new cache, not
// ready until it has listed etcd: the informers' re-watches wait, unseen,
// until it has, so they meet it ready on every run; after hold-cache they
// meet it unready, and a LIST it answers with 429 is retried, and the
// retry held, as E12's below, until release-cache has waited for the
// cache to be ready); E12's levers (put-raw, delete-raw) belong to the
// etcd world, and scenario.Parse refuses them elsewhere. etcd's own
// levers work in both: behind the cache it is kube-apiserver's own watch
// of etcd that resumes after restart-etcd or a member's failure, and the
// informers see nothing; after etcd-restore the cache goes on serving the
// world from before it until restart-apiserver (C7). progress reaches
// the cacher, which passes nothing on.
//
// Settling there cannot wait for a bookmark: the cache sends a watch
// nothing for a write its selectors filter out. A step has settled when
// the cache has taken in etcd's revision (its reflector's resourceVersion),
// every goroutine of the cacher and of apistorage's watches is parked
// with nothing to hand on (apistorage's Quiescent: a stack of every
// goroutine taken with the world stopped), and every event the cache
// handed to a watch has gone through the connection. A request that waits
// in the cache for it to catch up (a consistent read while it is held)
// counts as settled, once each of the side's requests in progress waits
// there: only the clock or release-cache moves it on (apistorage's
// Waiting). The cache does work on its clock (bookmarks
// every minute and before a watch's deadline), so advance moves time a
// second at a time there, settling after each second, as time passes for
// a real kube-apiserver; the bookmark timer's jitter is pinned at 1 s.
// Between two moves client-go is held to its own progress, not to
// cachelab's state: its requests made, its watches open or waiting, and
// a resync tick handled and what it queued popped (its informer's loop
// waits in Pop: a resync marks the handlers due by the clock's time, and
// the pop hands the sync on to those).
// The seconds at which nothing is due pass in one move of the clock: the
// scenario's clock (internal/scenarioclock) says when its next timer is
// due, leaving out the cache's own, of which apistorage's NextWork says
// when one next matters (a bookmark due, a compaction to make, a wait
// that ends). A day of scenario time is then a few thousand moves, each
// settled, and prints what 86,400 would (TestQuietSecondsPassInOneMove).
//
// # An etcd cluster
//
// A scenario whose first command is etcd-cluster [members=3|5] runs on an
// embedded etcd cluster (listwatch.EmbeddedOptions.Members), m1 leading;
// `cachelab run --etcd-members n` (Options.EtcdMembers) runs any scenario
// on one. etcd-stop-member, etcd-start-member and etcd-move-leader are its
// levers; restart-etcd, etcd-snapshot, etcd-restore and etcd-wipe are
// refused in such a file (scenario.Parse), and so is a stop that would
// leave no majority up. Every connection lists every member's endpoint but uses
// them in order, one member at a time (listwatch.ClientOptions.InOrder),
// where etcd's client would spread requests over all of them: the world's
// from m1, both informers' (behind the watch cache, each
// kube-apiserver's) from m2, so the leader and the member serving the
// watches are different members at the start, and which member a lever
// hits is the same on every run. Each lever asks etcd which member
// answers each connection and prints it. When a stopped member served the
// watches, etcd's client resumes them on the next member from the
// revision they had reached (as after restart-etcd); behind the cache
// that is kube-apiserver's own watch, and the informers see nothing
// (watch-cache-etcd-member-down); a leader stopped
// hands its leadership to the first member still up (etcd's own shutdown
// would pick the member connected to it longest), so every run has the same
// leader (clusterlevers.go). A follower applies the leader's writes a moment
// later, so settling and the progress lever ask a member for progress only
// once it has applied etcd's revision: its bookmark then says that
// revision on every run (memberApplied).
//
// # How a step runs
//
//	scenario step ──▶ etcd write / lever ──▶ both informers react
//	                                              │
//	        settle: cachelab caught up and idle ◀─┘
//	                client-go reached the same state (or a timeout)
//	                                              │
//	        compare every shared layer; check invariants ◀─┘
//
// Each informer has its own etcd connection behind a world.Conn (package
// world) that applies the selectors, records every request and every
// watch event as the reflector takes it, and pulls the scenario's levers:
// fail the next request, hold requests while "disconnected", close the
// watch. Each side
// records, in the same code for both, what its transform sees (objects
// entering the queue), its handlers' calls, what the informer logs about
// them (resync period changes), its indexer's changes and its HasSynced
// values. cachelab adds what only it can show: the reflector's steps
// (replace, backoff, resync), the deltas it pops, the handlers a sync
// notification skipped, and what a removed handler had buffered.
//
// put-raw stores bytes kube-apiserver cannot decode under a pod's key;
// every LIST then fails (E12) and the reflector retries on a growing
// real-clock backoff. Since each retry would fail the same way until
// etcd changes, the connection holds the next one until a step changes
// etcd again (a held retry counts as settled), so a step shows one
// failure, on every run. The held retry goes when that step settles,
// after all its writes (a delete of two objects is one change, not two),
// so both sides' retries meet the same etcd. expire-continue answers the next continue page
// with the 410 a compaction between pages gives (E4); fail-next
// list=<status> page=n fails only page n of a paged LIST. A reflector
// pages only when it LISTs (the classic stack, or the default one with
// server watch-list=off), at 500 a page: bulk-create n=501 makes two.
//
// # Settling
//
// A step is compared only once both sides have fully processed it.
// cachelab says so itself: its reflector has caught up with etcd's
// revision (or waits at a held connection or on the fake clock), its
// Replace is done, and its queue and handlers have nothing left
// (informer.Backlog). client-go's queue and listeners cannot be seen from
// outside, so once its reflector has caught up it must reach cachelab's
// handler call counts, HasSynced values, indexer and queue input; not
// reaching them is a divergence. Options.SettleTimeout bounds time
// without progress, not a step's total time: every new trace line on a
// side is progress, and so is a relist backoff in progress (client-go
// waits it on the real clock, and after repeated failures it grows to
// 30-60 s). A side that makes no progress for the timeout fails the step
// with what it was waiting for, in words.
// After the last step, both informers are stopped and any handler call
// or queue input either made after its last comparison is compared too
// (Session.Finish), so a late extra call from client-go is not missed.
// When a step's newest write is hidden by the selectors, no event would
// tell the informers etcd's revision, so settling asks etcd for a progress
// notification; that bookmark shows in the trace, labelled. Such a write
// made while the connection is down is still unseen when it comes back:
// the request is made then.
//
// etcd's revision can go back (etcd-restore, etcd-wipe): etcd's client
// resumes each watch from the revision it had reached, and etcd sends it
// nothing, not even progress, until a write gets there. An informer whose
// resourceVersion is past etcd's counts as caught up, so settling ends;
// the invariant notes say the indexer cannot be checked (etcd refuses the
// informer's resourceVersion as too large) or, once etcd reaches it
// again, how the two differ at one resourceVersion.
//
// # Controllers
//
// start-controller puts a controller on each informer (given before start,
// the controllers start with the informers, as a controller's main
// registers its handlers first): cachelab's
// controller/ (its handler, its workqueue/ rate-limiting queue, its
// ProcessNextWorkItem) and the same loop written on client-go's informer
// and util/workqueue, as sample-controller writes it. The reconcile is
// one script for both: reconcile-fail and reconcile-requeue say what the
// next reconciles of a key return, and with "writes" each reconcile
// records the object's spec.image in an annotation when it differs, an
// update that carries the resourceVersion it read (a stale read gets 409
// Conflict). Their steps are two compared layers, workqueue (add,
// coalesce, get, requeue with the limiter's delay, after, forget, done)
// and reconcile (what it read from the cache, what it returned, or the
// staleness guard holding it back); show workqueue prints each queue's
// ready keys and requeue counts.
//
// The workers run at the end of each step, after settling, in rounds
// until no key is ready (controllers.go says how, and which free choices
// of client-go it pins): the handler's calls are held and handed on with
// each map-order batch sorted by key; a round's writes are decided as
// they are asked for and made once for both sides when the round ends;
// within an advance the clock stops at each moment a key's delay ends.
// client-go's delaying queue moves keys on its own goroutine; before each
// round the runner waits until that goroutine is parked, as it does for
// the watch cache's.
//
// # Levers, in any order
//
// Each side's connection (world.Conn) exists from the start, so levers
// pulled before start (fail-next, disconnect) act on the informers' first
// requests. stop stops both informers; they keep what they hold and
// refuse new handlers (a trace line, as client-go refuses them), and a
// later start builds fresh ones with the handlers registered before the
// stop. progress always ends: when etcd would ignore the request (no open
// watch, a watch-list still sending its initial events, or a watch that
// starts beyond etcd's revision, since etcd reports progress only once
// every watch on a connection has reached its start), a note says so.
//
// # Determinism
//
// Scenario time is the only time. Everything the world does on a timer
// runs on the fake clock, including a watch's timeout: the simulated
// server ends every watch after at most 5 minutes of scenario time (the
// shortest timeout a reflector asks for; client-go draws its own from an
// unseeded source, so honouring each side's draw would put them out of
// step). A person pausing a --step run for an hour changes nothing.
//
// A fresh embedded etcd gives the same resourceVersions every run; the
// clock is fake (client-go's informer is given it through its unexported
// clock fields, since it has no option for one); UIDs and timestamps come
// from counters and the fake clock; cachelab's randomness is seeded; the
// watch timeout each reflector draws is printed as its range. Where an
// implementation iterates a map (a relist's tombstones, a resync, a
// watch-list's temporary store, a late handler's adds), cachelab's store
// lists in key order, one of the orders client-go can produce, so each
// layer is printed in the order things happened on cachelab's side and is
// still the same on every run. The comparison (package trace) takes each
// layer's fixed places exactly and those map-order batches as multisets,
// so an ordering bug outside a batch is caught (TestPlantedOrderingBugIsCaught).
// client-go's relist
// backoff always waits on the real clock, so a relist takes about a
// second of real time in both implementations (cachelab is told to do the
// same with RelistClock). Both reflectors arm their resync timer on a
// goroutine of their own once they watch; advance waits until it is
// armed, so a busy machine cannot make a resync come a period late.
// client-go's feature gates, which pick the stack, are process-wide: runs
// may overlap in one process only in the same stack (Open refuses the
// other); so is the data consistency detector's switch, and a run with
// the other setting waits for those in progress to end.
//
// Two things are left unshown because client-go itself leaves them to
// chance. A slow handler held in an initial-list call is held on
// whichever object map order gave it first: the trace says it is held,
// and names the object on release, with the rest of the batch. In the classic stack, a
// registration whose handler is held in an initial-list call may report
// HasSynced either way (client-go's DeltaFIFO marks the list synced
// before it hands the last item over): the trace says so in a note
// instead of printing either value.
//
// # Invariants
//
// After every settled step, on each side: the indexer equals etcd's
// content at the informer's last synced resourceVersion; each handler's
// view, rebuilt from its calls, equals the indexer; no handler heard of an
// add it already had, or an update or delete of something it did not
// have. Findings print as "note" lines, and are compared like everything
// else, so one that client-go shares is shown, not failed. etcd's side is
// a copy of the informer's LIST kept from step to step with what each
// step wrote (listwatch.ListCopy), read again whole after a restore or a
// wipe; the LIST itself words what the copy cannot read.
//
// # What a step costs
//
// A step should cost about what the informers in it do: what it changed,
// not the size of the world. Settling polls counters (handler calls,
// HasSynced, resourceVersions, line counts per layer), never the objects;
// the two indexers are compared once those agree, without reflection; a
// step's events are compared once, a free batch as a multiset, and only a
// layer that differs is sorted for its diff (BenchmarkScale: 1k, 10k and
// 100k objects in both worlds).
//
// # The data consistency detector
//
// A scenario whose opening comment says "# Env:
// KUBE_WATCHLIST_INCONSISTENCY_DETECTOR=true" (Options.ConsistencyDetector
// overrides it) runs both sides with the data consistency detector on,
// client-go's and cachelab's (package consistencydetector), as that
// variable does for a process: each watch-list is followed by a LIST of
// its resourceVersion, a request line on both sides. watch-list-lose
// makes a watch-list leave an object out, as a watch cache with a bug
// would. A difference makes the reflector panic on its own goroutine,
// where utilruntime.HandleCrash would end the process; the run contains
// it instead (detector.go): a panic handler records it as a "log" line on
// that side, stops that side's informer and ends the goroutine, and
// every other panic goes on as before. Both sides must catch it for the
// step to agree.
//
// # The queue world
//
// A SharedIndexInformer cannot be paused deterministically (its queue is
// processed under the queue's lock, so pausing processing stops the
// reflector too). start-queue runs a reflector into the stack's bare queue
// on each side, and the simulator pops both queues after each step unless
// paused: DeltaFIFO's grouping by key and RealFIFO's arrival order then
// show exactly (queueworld.go).
package sim
