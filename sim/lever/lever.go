// Package lever says, for every command of the scenario language, what
// of a world it acts on, and so in which worlds it can be pulled: a
// lever is a value, and a world a set of parts. It is the one answer to
// "can this step run here?" that the scenario's parser (for the world its
// "# Server:" line names), the runner's check before the first step
// (sim.Check, for the world the run's options make), the runner's own
// guard at the step, and explore (which faults it may place) all ask.
// How each says no is theirs: a scenario file is told which "# Server:"
// line to write, a run which flag to give.
//
// The shape is that of etcd's robustness tests, where each failpoint is
// a type with Available(cluster) and Inject: here Available(World), and
// what a lever does when pulled is package sim's pull (levers.go,
// runs.go), given the part of the world it acts on, which every world
// this package says has the lever holds (TestEveryLeverFindsItsPart).
package lever

import (
	"fmt"
	"sort"
)

// Need is a part of a world that a lever acts on. A world either has it
// or lacks it.
type Need uint16

const (
	// Live: a server that steps can change. A replay's server is a
	// recording: only the informers' own commands run there.
	Live Need = 1 << iota
	// OwnServer: a kube-apiserver of the run's own, whose answers and
	// features a step can set (not a cluster's).
	OwnServer
	// EtcdKeys: the run's keys in etcd, written directly (not a
	// cluster's etcd, which no client reaches).
	EtcdKeys
	// EtcdNotify: etcd itself, reachable from a client, to ask it for a
	// progress notification.
	EtcdNotify
	// EtcdHistory: etcd's whole history, which compaction discards for
	// every key: an etcd the run owns, or an external one whose user
	// allowed it (--allow-compacting-external-etcd).
	EtcdHistory
	// OwnEtcd: an etcd the run started itself (embedded), which it can
	// stop, copy, wipe or grow into a cluster.
	OwnEtcd
	// NoWatchCache: kube-apiserver with its watch cache off, every
	// request read from etcd (the etcd world).
	NoWatchCache
	// OwnWatchCache: kube-apiserver's watch cache, of the run's own.
	OwnWatchCache
	// OwnAPIServers: kube-apiservers of the run's own, to start more of
	// and to move the informers between.
	OwnAPIServers
	// ManyResources: a world that serves every built-in resource, those
	// a cluster's controllers act on too (deployments): every world of
	// the run's own kube-apiserver storage. On a cluster its
	// controllers would act on them outside the scenario; a replay
	// serves what was recorded, pods.
	ManyResources
	// CustomResources: kube-apiserver's apiextensions, serving the
	// resources a CustomResourceDefinition defines: every world of the
	// run's own storage.
	CustomResources
	// CoreObjects: configmaps and secrets beside pods, objects of the
	// core group that nothing in a cluster acts on: every world of the
	// run's own storage, a cluster (in the run's namespace), and a
	// replay (of a recording of one of them).
	CoreObjects

	lastNeed = CoreObjects
)

// needNames are the needs' names, for a refusal's default message.
var needNames = map[Need]string{
	Live:            "a live server (not a recording)",
	OwnServer:       "a kube-apiserver of the run's own",
	EtcdKeys:        "the run's keys in etcd",
	EtcdNotify:      "an etcd reachable from a client",
	EtcdHistory:     "an etcd whose whole history the run may compact",
	OwnEtcd:         "the embedded etcd",
	NoWatchCache:    "kube-apiserver with its watch cache off",
	OwnWatchCache:   "kube-apiserver's watch cache",
	OwnAPIServers:   "kube-apiservers of the run's own",
	ManyResources:   "resources other than pods",
	CustomResources: "custom resources (kube-apiserver's apiextensions)",
	CoreObjects:     "configmaps and secrets",
}

func (n Need) String() string {
	if s, ok := needNames[n]; ok {
		return s
	}
	return fmt.Sprintf("Need(%#x)", uint16(n))
}

// A World is where a scenario runs, as its parts: what a lever may act
// on there.
type World struct {
	// Server is the world's server as the command line names it
	// (--server etcd, watchcache or apiserver), or "cluster"
	// (--kubeconfig), or "replay" (cachelab replay).
	Server string
	// External says its etcd is not the run's (--etcd-endpoints).
	External bool
	has      Need
}

// Has reports whether w has every part n names.
func (w World) Has(n Need) bool { return w.has&n == n }

func (w World) String() string {
	if w.External {
		return w.Server + " on an external etcd"
	}
	return w.Server
}

// The worlds of the run's own kube-apiserver storage, on the embedded
// etcd; External makes each one on an etcd the run does not own.
var (
	// Etcd is kube-apiserver's storage with its watch cache off
	// (--server etcd).
	Etcd = World{Server: "etcd", has: Live | OwnServer | EtcdKeys | EtcdNotify | EtcdHistory | OwnEtcd | NoWatchCache | ManyResources | CustomResources | CoreObjects}
	// WatchCache is kube-apiserver's watch cache, in process (--server
	// watchcache).
	WatchCache = World{Server: "watchcache", has: Live | OwnServer | EtcdKeys | EtcdNotify | EtcdHistory | OwnEtcd | OwnWatchCache | OwnAPIServers | ManyResources | CustomResources | CoreObjects}
	// APIServer is the watch-cache world with the informers reaching
	// it over HTTPS (--server apiserver).
	APIServer = World{Server: "apiserver", has: WatchCache.has}
)

// The worlds whose server is not the run's.
var (
	// Cluster is a real cluster through a kubeconfig (--kubeconfig):
	// neither its kube-apiserver nor its etcd is the run's. The run
	// writes and watches pods, configmaps and secrets in a namespace of
	// its own there.
	Cluster = World{Server: "cluster", has: Live | CoreObjects}
	// Replay is a recording played back: nothing of its server changes.
	// Its informer watches what was recorded, any built-in resource (a
	// recording only reads): its scenario, made from the recording,
	// names no other.
	Replay = World{Server: "replay", has: CoreObjects | ManyResources}
)

// External is w on an etcd the run does not own (--etcd-endpoints): it
// keeps to a key prefix of its own there, and cannot stop, copy or
// compact that etcd.
func External(w World) World {
	w.External = true
	w.has &^= OwnEtcd | EtcdHistory
	return w
}

// CompactingAllowed is w with the user's leave to compact an etcd it
// does not own (--allow-compacting-external-etcd): compaction is global,
// and would discard every other application's history too.
func CompactingAllowed(w World) World {
	w.has |= EtcdHistory
	return w
}

// Worlds are every world a run can have.
var Worlds = []World{Etcd, WatchCache, APIServer, External(Etcd), External(WatchCache), External(APIServer), Cluster, Replay}

// A Lever is one command of the scenario language as what it acts on.
// Commands that act only on the informers need only a live server.
type Lever struct {
	Name string
	// Needs are the parts of a world it acts on.
	Needs Need
	// Does says what it does to the part a world lacks, in a refusal:
	// "it stops and starts etcd".
	Does string
	// OnCluster says why a cluster refuses it, if one does.
	OnCluster string
}

// Available says why l cannot be pulled in w, or nil: a *Refused naming
// the first of its needs that w lacks.
func (l Lever) Available(w World) error {
	for n := Need(1); n <= lastNeed; n <<= 1 {
		if l.Needs&n != 0 && !w.Has(n) {
			return &Refused{Lever: l, World: w, Missing: n}
		}
	}
	return nil
}

// Refused is a lever that a world lacks a part for.
type Refused struct {
	Lever   Lever
	World   World
	Missing Need
}

func (r *Refused) Error() string {
	return fmt.Sprintf("%s needs %s; the world %s has none", r.Lever.Name, r.Missing, r.World)
}

// informerOnly is what the informers' own commands need: a live server,
// except the few a replay plays (the recording answers their requests).
const informerOnly = Live

// clusterEtcd and clusterCache end the reasons a cluster gives.
const (
	clusterEtcd   = ", and a cluster's etcd is not the run's"
	clusterServer = ", and a cluster's server is not the run's"
	clusterCache  = ", and a cluster's is not the run's"
)

// embedded is a lever of the embedded etcd.
func embedded(name, does string) Lever {
	return Lever{Name: name, Needs: Live | OwnEtcd, Does: does, OnCluster: does + clusterEtcd}
}

// cache is a lever of the run's own watch cache.
func cache(name, does string) Lever {
	return Lever{Name: name, Needs: Live | OwnWatchCache, Does: does, OnCluster: does + clusterCache}
}

// apiservers is a lever that needs kube-apiservers of the run's own.
func apiservers(name, does string) Lever {
	return Lever{Name: name, Needs: Live | OwnWatchCache | OwnAPIServers, Does: does, OnCluster: does}
}

// levers are every command of the scenario language, by name.
var levers = index(
	// The world's objects.
	Lever{Name: "create", Needs: Live},
	Lever{Name: "update", Needs: Live},
	Lever{Name: "delete", Needs: Live},
	Lever{Name: "bulk-create", Needs: Live},
	Lever{Name: "crd", Needs: Live | ManyResources | CustomResources, Does: "it defines a custom resource",
		OnCluster: "it defines a custom resource, and a CustomResourceDefinition is the whole cluster's, not the run's namespace's"},
	Lever{Name: "gc", Needs: Live | ManyResources, Does: "it sweeps the run's objects of every resource for those whose owners are gone",
		OnCluster: "a cluster's garbage collector sweeps on its own"},
	Lever{Name: "put-raw", Needs: Live | EtcdKeys | NoWatchCache, Does: "it stores bytes under a key in etcd",
		OnCluster: "it stores bytes under a key in etcd" + clusterEtcd},
	Lever{Name: "delete-raw", Needs: Live | EtcdKeys | NoWatchCache, Does: "it removes bytes from etcd",
		OnCluster: "it removes bytes from etcd" + clusterEtcd},
	// etcd.
	Lever{Name: "compact", Needs: Live | EtcdHistory, Does: "it compacts etcd", OnCluster: "it compacts etcd" + clusterEtcd},
	Lever{Name: "progress", Needs: Live | EtcdNotify, Does: "it asks etcd for a progress notification",
		OnCluster: "it asks etcd for a progress notification, and a cluster's etcd is not reachable from a client"},
	embedded("restart-etcd", "it stops and starts etcd"),
	embedded("etcd-snapshot", "it copies etcd's data directory"),
	embedded("etcd-restore", "it puts a copy of etcd's data directory back"),
	embedded("etcd-wipe", "it removes etcd's data directory"),
	embedded("etcd-cluster", "it starts an etcd cluster of its own"),
	embedded("etcd-stop-member", "it stops a member of the cluster"),
	embedded("etcd-start-member", "it starts a member of the cluster"),
	embedded("etcd-move-leader", "it moves the cluster's leadership"),
	// The informers' connections and the server's answers.
	Lever{Name: "close-watch", Needs: Live},
	Lever{Name: "disconnect", Needs: Live},
	Lever{Name: "reconnect", Needs: Live},
	Lever{Name: "fail-next"},
	Lever{Name: "expire-continue", Needs: Live | OwnServer, Does: "it makes the server answer a continue token as compacted",
		OnCluster: "it makes the server answer a continue token as compacted" + clusterServer},
	Lever{Name: "watch-list-lose", Needs: Live},
	Lever{Name: "server", Needs: Live | OwnServer, Does: "it switches a server's WatchList feature",
		OnCluster: "it switches a server's WatchList feature" + clusterServer},
	// The watch cache.
	cache("hold-cache", "it holds kube-apiserver's watch cache"),
	cache("release-cache", "it releases kube-apiserver's watch cache"),
	cache("restart-apiserver", "it restarts kube-apiserver"),
	apiservers("add-apiserver", "it starts a kube-apiserver of its own"),
	apiservers("use-apiserver", "it moves the informers between kube-apiservers of the run's own"),
	// The clock.
	Lever{Name: "advance"},
	Lever{Name: "resync", Needs: informerOnly},
	// The informers, their handlers, factories and controllers.
	Lever{Name: "start"},
	Lever{Name: "start-queue", Needs: informerOnly},
	Lever{Name: "pause", Needs: informerOnly},
	Lever{Name: "resume", Needs: informerOnly},
	Lever{Name: "stop", Needs: informerOnly},
	Lever{Name: "add-handler"},
	Lever{Name: "remove-handler", Needs: informerOnly},
	Lever{Name: "release", Needs: informerOnly},
	Lever{Name: "factory", Needs: informerOnly},
	Lever{Name: "informer", Needs: informerOnly},
	Lever{Name: "factory-start", Needs: informerOnly},
	Lever{Name: "factory-wait", Needs: informerOnly},
	Lever{Name: "start-controller", Needs: informerOnly},
	Lever{Name: "reconcile-fail", Needs: informerOnly},
	Lever{Name: "reconcile-requeue", Needs: informerOnly},
	// Looking.
	Lever{Name: "show"},
	Lever{Name: "settle"},
)

func index(ls ...Lever) map[string]Lever {
	m := make(map[string]Lever, len(ls))
	for _, l := range ls {
		if _, dup := m[l.Name]; dup {
			panic("lever: " + l.Name + " twice")
		}
		m[l.Name] = l
	}
	return m
}

// Resource is the lever a step pulls by naming a resource (create
// configmaps ..., informer a secrets): pods need nothing but what the
// step's command needs, configmaps and secrets a world that holds them
// (CoreObjects), every other resource a world that serves every one.
// A write needs a live world by its own command's lever.
func Resource(name string) Lever {
	does := "it writes or watches " + name
	switch name {
	case "", "pods":
		return Lever{Name: "pods"}
	case "configmaps", "secrets":
		return Lever{Name: name, Needs: CoreObjects, Does: does}
	}
	return Lever{Name: name, Needs: ManyResources, Does: does,
		OnCluster: does + ", and on a cluster its controllers would act on it (a Deployment's would make ReplicaSets and pods) outside the run: " +
			"a run there writes and watches pods, configmaps and secrets"}
}

// Finalizers is the lever a write pulls by giving finalizers=: an
// object whose deletion waits for its finalizers, as kube-apiserver's
// registry keeps it. Every live world has it, a cluster too: the run
// takes the finalizers off its own objects at its end, before it
// deletes its namespace, which they would otherwise hold.
var Finalizers = Lever{Name: "finalizers=", Needs: Live, Does: "it gives an object finalizers"}

// Owner is the lever a write pulls by giving owner=: an object that a
// garbage collector deletes after its owner, which the worlds of the
// run's own storage model with gc. On a cluster its garbage collector
// would delete it on its own time, between any two steps.
var Owner = Lever{Name: "owner=", Needs: Live | ManyResources, Does: "it gives an object an owner",
	OnCluster: "it gives an object an owner, and a cluster's garbage collector would delete it when its owner goes, on its own time, between any two steps"}

// Lookup is the lever of command cmd.
func Lookup(cmd string) (Lever, bool) {
	l, ok := levers[cmd]
	return l, ok
}

// Of is the lever of command cmd, which must be one of the language's:
// a scenario's parser has checked its commands.
func Of(cmd string) Lever {
	l, ok := levers[cmd]
	if !ok {
		panic("lever: no command " + cmd)
	}
	return l
}

// Names are every lever's name, sorted.
func Names() []string {
	out := make([]string, 0, len(levers))
	for n := range levers {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
