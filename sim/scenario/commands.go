package scenario

import "fmt"

// afterEventsHelp is what close-watch's and disconnect's after-events=
// take, and afterPagesHelp what disconnect's after-pages= takes.
const (
	afterEventsHelp = "inside the next step: after this many of its watch events (adds, updates, deletes), counted by each informer"
	afterPagesHelp  = "inside the next step: after this many pages of paged LISTs, each with more pages to come, counted by each informer"
)

// What the writes' resource-specific values take, and informer=.
const (
	resourceList      = "pods, configmaps, secrets, deployments, or a custom resource a crd step defines"
	specHelp          = "a custom resource's spec fields, as (k=v,...): each typed as its schema types it"
	dataHelp          = "a configmap's or secret's data, as (k=v,k2=v2), or () for none (a secret's values are stored base64-encoded, as kube-apiserver stores them)"
	replicasHelp      = "a deployment's spec.replicas (0-1000)"
	startInformerHelp = "the resource the informers list and watch (" + resourceList + "; pods if not given)"
	finalizersHelp    = "the object's finalizers, as (example.com/hold,...), or () for none"
	ownerHelp         = "the object's controller owner, an object created before it in its namespace: an ownerReference with the owner's uid, controller and blockOwnerDeletion"
	informerHelp      = "the factory's informer it goes on, as <factory> for its pods informer or <factory>/<resource> (informer <factory> [<resource>] made it); without it, start's"
)

// BulkNamespace is the namespace bulk-create puts its objects in when
// the step does not say ns=.
const BulkNamespace = "bulk"

// ObservedAnnotation is what a controller started with start-controller
// writes keeps up to date: the image it last saw in the object's spec,
// as a status would. start-controller's help names it.
const ObservedAnnotation = "cachelab.dev/observed-image"

// command is one scenario command's specification: the arguments it
// takes, and a line of help for `cachelab scenarios --commands` and for
// errors. What it does is the runner's (package sim, runs.go); a
// scenario holds only what it says. ParseArgs checks a step against its
// command; CommandNames and CommandDocs list them.
type command struct {
	usage  string
	help   string
	minPos int // positional arguments (object keys, names, durations)
	maxPos int
	values map[string]string // key=value arguments and what each takes
	flags  map[string]string // bare-word flags and what each means
}

// commands is the command table: what each command takes, and its help.
// What each does is the runner's (package sim, runs.go).
var commands = map[string]*command{
	// The world.
	"create": {usage: "create [<resource>] <ns/name>... [labels=(k=v,...)] [data=(k=v,...)] [replicas=<n>] [spec=(k=v,...)] [finalizers=(f,...)] [owner=<resource>/<ns>/<name>] [managed]",
		help:   "create objects in etcd, pods unless a resource is named first (" + resourceList + ")",
		minPos: 1, maxPos: 100, values: map[string]string{"labels": "labels, as (k=v,k2=v2)", "data": dataHelp, "replicas": replicasHelp, "spec": specHelp,
			"finalizers": finalizersHelp, "owner": ownerHelp},
		flags: map[string]string{"managed": "give the object a managedFields entry, as server-side apply would"}},
	"update": {usage: "update [<resource>] <ns/name> [labels=(k=v,...)] [image=<image>] [data=(k=v,...)] [replicas=<n>] [spec=(k=v,...)] [finalizers=(f,...)] [times=<n>]",
		help:   "update an object in etcd, a pod unless a resource is named first (labels replace the old ones, data= the old data); times=n makes n updates in a row, each setting the label update=<count>",
		minPos: 1, maxPos: 1, values: map[string]string{"labels": "the new labels, as (k=v,...), or () for none", "image": "a new spec.image (of a deployment: its pod template's container's)",
			"data": dataHelp, "replicas": replicasHelp, "spec": specHelp + " (set on the old spec)", "finalizers": finalizersHelp + "; an update that removes the last one of an object being deleted deletes it",
			"times": fmt.Sprintf("how many updates in a row (1-%d); each also sets the label update=<count>, so each is a change with its own resourceVersion", maxTimes)}},
	"put-raw": {usage: "put-raw <ns/name> <text>", help: "store text as it is under the object's etcd key, as a tool writing to etcd directly would: a value kube-apiserver cannot decode",
		minPos: 2, maxPos: 2},
	"delete-raw": {usage: "delete-raw <ns/name>", help: "remove the value put-raw stored (kube-apiserver cannot delete what it cannot decode without its unsafe option)",
		minPos: 1, maxPos: 1},
	"delete": {usage: "delete [<resource>] <ns/name>...", help: "delete objects from etcd, pods unless a resource is named first; an object with finalizers is kept, marked with a deletionTimestamp, until an update removes its last finalizer", minPos: 1, maxPos: 100},
	"crd": {usage: "crd (a CustomResourceDefinition's manifest follows, up to ----)",
		help: "define a custom resource, as a CustomResourceDefinition does: the YAML manifest is on the lines after crd, up to its ----; " +
			"from the next step on, the scenario names the resource by its plural (create foos ns0/f spec=(replicas=2)), and kube-apiserver's " +
			"apiextensions prunes, defaults and validates each write against the manifest's schema"},
	"gc": {usage: "gc", help: "the garbage collector's sweep, in the background: delete each object whose owners (owner=) are all gone, and again for what that leaves without owners"},
	"bulk-create": {usage: "bulk-create n=<count> [ns=<namespace>] [labels=(k=v,...)]",
		help:   "create n objects ns/obj-0001..., numbered to the width of n, in namespace " + BulkNamespace + " unless ns= says another",
		values: map[string]string{"n": "how many (1-100000)", "ns": "their namespace (default " + BulkNamespace + ")", "labels": "their labels"}},
	"compact":      {usage: "compact", help: "compact etcd at its current revision: older resourceVersions are gone (410)"},
	"progress":     {usage: "progress", help: "ask etcd for a progress notification: each watch that allows bookmarks gets a BOOKMARK"},
	"restart-etcd": {usage: "restart-etcd", help: "stop etcd and start it again on the same data and ports (embedded etcd only)"},
	// The connection's levers (package sim, connlevers.go).
	"close-watch": {usage: "close-watch [after-events=<n>]",
		help:   "the server closes the informers' watches (as kube-apiserver does at a watch's timeout); after-events=n: inside the next step, right after each informer has taken n watch events of it",
		values: map[string]string{"after-events": afterEventsHelp}},
	"disconnect": {usage: "disconnect [after-events=<n> | after-pages=<n>]",
		help:   "drop the informers' connections: open watches end, new requests wait for reconnect; after-events=n: inside the next step, right after each informer has taken n watch events of it; after-pages=n: inside the next step, right after each informer has taken n pages of paged LISTs with more to come (the next page's request waits)",
		values: map[string]string{"after-events": afterEventsHelp, "after-pages": afterPagesHelp}},
	"reconnect": {usage: "reconnect", help: "let waiting and new requests through again"},
	"fail-next": {usage: "fail-next [list=<status> [page=<n>]] [watch=<status>]",
		help: "make the informers' next LIST or WATCH fail with an HTTP status (410, 429, 500, ...); page=n fails only the request for page n of a paged LIST",
		values: map[string]string{"list": "status for the next LIST", "watch": "status for the next WATCH (watch-list included)",
			"page": fmt.Sprintf("with list=: the page whose request fails (1-%d; 1 is the request without a continue token)", maxPage)}},
	"expire-continue": {usage: "expire-continue",
		help: "the next LIST page asked for with a continue token gets 410 Expired, as when etcd compacts past the list's revision between two pages"},
	"watch-list-lose": {usage: "watch-list-lose <ns/name>",
		help: "each informer's next watch-list leaves the object out of its initial events, though etcd and a LIST still have it: a watch cache that lost it, " +
			"which the data consistency detector catches (switched on by the scenario's \"# Env:\" line, or cachelab run --consistency-detector on)",
		minPos: 1, maxPos: 1},
	"server": {usage: "server watch-list=on|off",
		help:   "turn a kube-apiserver feature of the simulated server on or off: with watch-list=off a watch that asks for initial events is refused (422), as by kube-apiserver with its WatchList gate off",
		values: map[string]string{"watch-list": "on or off"}},
	// etcd's revision taken back (package sim, etcdlevers.go).
	"etcd-snapshot": {usage: "etcd-snapshot <name>",
		help:   "stop etcd, copy its data under <name>, and start it again on the same ports (embedded etcd only)",
		minPos: 1, maxPos: 1},
	"etcd-restore": {usage: "etcd-restore <name>",
		help:   "stop etcd, put the data of snapshot <name> back, and start it again: its revision goes back to the snapshot's (embedded etcd only)",
		minPos: 1, maxPos: 1},
	"etcd-wipe": {usage: "etcd-wipe",
		help: "stop etcd, remove its data, and start it again empty: its revision starts again at 1 (embedded etcd only; snapshots are kept)"},
	// An etcd cluster (cluster.go; package sim, clusterlevers.go).
	"etcd-cluster": {usage: "etcd-cluster [members=3|5]",
		help:   "run on an embedded etcd cluster of 3 (or 5) members on loopback, m1 leading; the scenario's first command (embedded etcd only)",
		values: map[string]string{"members": "how many members: 3 (the default) or 5"}},
	"etcd-stop-member": {usage: "etcd-stop-member <m1|m2|...>",
		help:   "stop one member of the etcd cluster (its data and ports kept); a leader hands its leadership on first, connections it served move to their next member",
		minPos: 1, maxPos: 1},
	"etcd-start-member": {usage: "etcd-start-member <m1|m2|...>",
		help:   "start a stopped member again: it rejoins the cluster and catches up from the leader before it serves",
		minPos: 1, maxPos: 1},
	"etcd-move-leader": {usage: "etcd-move-leader <m1|m2|...>",
		help:   "hand the cluster's leadership to a running member (etcd's MoveLeader, as etcdctl move-leader)",
		minPos: 1, maxPos: 1},
	// The watch cache (package sim, cachelevers.go).
	"hold-cache": {usage: "hold-cache [<apiserver>]",
		help:   "the watch cache stops taking in etcd's events: it falls behind etcd, and requests it serves (LIST at rv 0, watches) see the older state, until release-cache (watch-cache world only)",
		maxPos: 1},
	"restart-apiserver": {usage: "restart-apiserver [<apiserver>]",
		help:   "kube-apiserver restarts: its watch cache ends every watch and starts again, listing etcd; after hold-cache it stays not ready (a WATCH gets 429) until release-cache (watch-cache world only)",
		maxPos: 1},
	"release-cache": {usage: "release-cache [<apiserver>]",
		help:   "the watch cache takes in every event it was held from, and catches up with etcd (watch-cache world only)",
		maxPos: 1},
	"add-apiserver": {usage: "add-apiserver",
		help: "start a second kube-apiserver (apiserver 2), with a watch cache of its own, over the same etcd; the informers keep talking to the one they talk to (watch-cache world only)"},
	"use-apiserver": {usage: "use-apiserver <apiserver>",
		help:   "the informers' connections move to kube-apiserver 1 or 2, as behind a load balancer: their next requests go there; open watches stay where they are (watch-cache world only)",
		minPos: 1, maxPos: 1},
	// The clock.
	"advance": {usage: "advance <duration>", help: "move the fake clock forward (resync periods, watch durations, re-watch backoff); behind the watch cache, with informers running, at most 24h at once (each watch is opened again every 5 to 10 minutes)",
		minPos: 1, maxPos: 1},
	"resync": {usage: "resync", help: "advance the fake clock by the informer's resync period, so a resync is due"},
	// The informers.
	"start": {usage: "start [informer=<resource>] [stack=default|classic] [resync=<period>] [namespace=<ns>] [labels=<selector>] [fields=<selector>] [transform=strip-managed-fields]",
		help: "start both informers (cachelab's and client-go's) with the handlers added so far",
		values: map[string]string{"informer": startInformerHelp, "stack": "default (RealFIFO, watch-list) or classic (DeltaFIFO, LIST+WATCH)", "resync": "the default resync period",
			"namespace": "watch one namespace only (its requests go to the namespace's path)",
			"labels":    "a label selector, as (app=web) or (app in (a,b))", "fields": "a field selector (metadata.name, metadata.namespace)", "transform": "strip-managed-fields"}},
	"start-queue": {usage: "start-queue [informer=<resource>] [stack=default|classic] [resync=<period>] [namespace=<ns>] [labels=<selector>] [fields=<selector>]",
		help: "start a reflector filling the stack's bare queue (RealFIFO or DeltaFIFO) on each side; the simulator pops it after each step",
		values: map[string]string{"informer": startInformerHelp, "stack": "default (RealFIFO) or classic (DeltaFIFO)", "resync": "the resync period",
			"namespace": "watch one namespace only", "labels": "a label selector", "fields": "a field selector"}},
	"pause":  {usage: "pause", help: "stop popping the queue (start-queue only): deltas pile up as the queue stores them"},
	"resume": {usage: "resume", help: "pop everything queued, and keep popping after each step (start-queue only)"},
	"stop":   {usage: "stop", help: "stop both informers; they keep what they hold, refuse new handlers, and a later start builds fresh ones"},
	"add-handler": {usage: "add-handler <name> [resync=<period>] [slow] [informer=<factory>]", help: "register an event handler on both informers (before or after start)",
		minPos: 1, maxPos: 1, values: map[string]string{"resync": "this handler's resync period",
			"informer": informerHelp},
		flags: map[string]string{"slow": "its calls wait until `release <name>`"}},
	"remove-handler": {usage: "remove-handler <name>", help: "unregister a handler", minPos: 1, maxPos: 1},
	"release":        {usage: "release <name>", help: "let a slow handler's calls through; it is not slow any more", minPos: 1, maxPos: 1},
	// Shared informer factories (package sim, factories.go).
	"factory": {usage: "factory <name> [namespace=<ns>] [labels=<selector>] [fields=<selector>] [resync=<period>]",
		help:   "make a shared informer factory on each side (cachelab's factory/, client-go's informers.SharedInformerFactory); its informers list what the options say",
		minPos: 1, maxPos: 1, values: map[string]string{"namespace": "its informers watch one namespace only", "labels": "a label selector, as (app=web)",
			"fields": "a field selector (metadata.name, metadata.namespace)", "resync": "its default resync period"}},
	"informer": {usage: "informer <factory> [<resource>]", help: "ask the factory for its informer of a resource, pods unless one is named (" + resourceList + "): the first request makes it, every later one gets the same; it runs at the factory's next Start",
		minPos: 1, maxPos: 1},
	"factory-start": {usage: "factory-start <factory>", help: "the factory's Start: run every informer asked for and not started yet, and only those",
		minPos: 1, maxPos: 1},
	"factory-wait": {usage: "factory-wait <factory>", help: "what the factory's WaitForCacheSync returns once the step has settled: each started informer's HasSynced ({} if none was started)",
		minPos: 1, maxPos: 1},
	// The controllers (package sim, controllers.go).
	"start-controller": {usage: "start-controller [workers=<n>] [writes] [guard] [skip-forget] [name=<name>] [informer=<factory>]",
		help: "put a controller on each informer (before start, they start with the informers): handlers queue keys on a rate-limiting workqueue, " +
			"workers reconcile them from the cache (cachelab's controller/ and workqueue/, and the same loop on client-go's workqueue); they run after each step until no key is ready",
		values: map[string]string{"workers": fmt.Sprintf("keys reconciled in one round (1-%d, default 1)", maxWorkers),
			"name":     "the controller's name, which its trace lines carry; several controllers each need one",
			"informer": informerHelp},
		flags: map[string]string{"writes": "each reconcile records the object's spec.image in the annotation " + ObservedAnnotation + " when it differs (an update with the resourceVersion it read)",
			"guard":       "the staleness guard: no reconcile while the cache is older than the controller's own last write of the key",
			"skip-forget": "the bug: success does not call Forget, so the backoff never resets"}},
	"reconcile-fail": {usage: "reconcile-fail <ns/name> [times=<n>] [requeue-after=<duration>]",
		help:   "the key's next n reconciles return an error (with a requeue-after too, if given: the error wins)",
		minPos: 1, maxPos: 1, values: map[string]string{"times": fmt.Sprintf("how many reconciles (1-%d, default 1)", maxTimes),
			"requeue-after": "a delay the failing reconcile also asks for"}},
	"reconcile-requeue": {usage: "reconcile-requeue <ns/name> after=<duration> [times=<n>]",
		help:   "the key's next n reconciles succeed and ask to be requeued after the duration",
		minPos: 1, maxPos: 1, values: map[string]string{"after": "the requeue-after delay", "times": fmt.Sprintf("how many reconciles (1-%d, default 1)", maxTimes)}},
	// Looking. show's lines are added once the step has settled
	// (package sim, runner.show).
	"show":   {usage: "show store|queue|handlers|requests|synced|metrics|workqueue", help: "print what one part holds now (metrics: what a scrape of the informer's metrics would read; workqueue: the controller's queue)", minPos: 1, maxPos: 1},
	"settle": {usage: "settle", help: "wait until both informers have processed everything (every step does this; it prints nothing new)"},
}
