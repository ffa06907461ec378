package scenario

import (
	"fmt"

	"github.com/cachelab/cachelab/sim/lever"
)

// The worlds a scenario runs in: its "# Server:" line, and the runner's
// Options.Server (package sim).
const (
	// ServerEtcd is kube-apiserver with its watch cache off: every
	// request is read from etcd (listwatch, cachelab's own).
	ServerEtcd = "etcd"
	// ServerWatchCache is kube-apiserver's real storage layer, its
	// watch cache in front of etcd (apistorage, k8s.io/apiserver).
	ServerWatchCache = "watchcache"
	// ServerAny, in a scenario, says it means the same in both worlds.
	ServerAny = "any"
)

// DefaultServer is the world of a scenario that runs in either: what a
// cluster runs, kube-apiserver with its watch cache.
const DefaultServer = ServerWatchCache

// NeedsServer is the world the command cmd needs: ServerWatchCache for
// the watch cache's levers, ServerEtcd for the levers only the etcd
// world has, "" for a command of both. It is the lever's own answer
// (package sim/lever).
func NeedsServer(cmd string) string {
	l, _ := lever.Lookup(cmd)
	switch {
	case l.Needs&lever.OwnWatchCache != 0:
		return ServerWatchCache
	case l.Needs&lever.NoWatchCache != 0:
		return ServerEtcd
	}
	return ""
}

// The etcd world's levers are those the watch-cache world does not
// model: with an undecodable value in etcd (E12), kube-apiserver's cache
// never takes in that revision (tried: it stays one behind, for as long
// as the value is there, and the step never settles); what it does
// meanwhile is its own story, not the one E12 tells. etcd's other levers
// are in both: behind the cache it is kube-apiserver's own watch of etcd
// that resumes after a restart or a member's failure, unseen by the
// informers (restart-etcd.txt, watch-cache-etcd-member-down.txt), and
// after a restore the cache goes on serving the world from before it
// (watch-cache-etcd-restore.txt, C7).

// worldFor says why cmd cannot run in a scenario whose "# Server:" line
// says server, or nil, in the words of a scenario file. A file's worlds
// run on the embedded etcd and have every part but the other world's
// server, so the lever's answer is NeedsServer's.
func worldFor(cmd, server string) error {
	switch need := NeedsServer(cmd); {
	case need == ServerWatchCache && server != ServerWatchCache:
		return fmt.Errorf("%s needs kube-apiserver's watch cache: say \"# Server: %s\" in the scenario's opening comment", cmd, ServerWatchCache)
	case need == ServerEtcd && server == ServerWatchCache:
		return fmt.Errorf("%s is a lever of the etcd world (kube-apiserver with its watch cache off): say \"# Server: %s\"", cmd, ServerEtcd)
	case need == ServerEtcd && server == ServerAny:
		return fmt.Errorf("%s is a lever of the etcd world, so the scenario does not mean the same in both: say \"# Server: %s\"", cmd, ServerEtcd)
	}
	return nil
}

// apiserverStep checks a watch-cache lever against the kube-apiservers
// the scenario has started: one, and a second after add-apiserver.
func (p *dryRun) apiserverStep(cmd string, a Args) error {
	if cmd == "add-apiserver" {
		if p.apiservers+1 >= MaxAPIServers {
			return fmt.Errorf("add-apiserver: the scenario runs %d kube-apiservers already, the most it may", MaxAPIServers)
		}
		p.apiservers++
		return nil
	}
	n, given, err := a.APIServer()
	if err != nil {
		return fmt.Errorf("%s %v", cmd, err)
	}
	if given && n > p.apiservers+1 {
		return fmt.Errorf("%s %d: there is no kube-apiserver %d yet (add-apiserver starts the second)", cmd, n, n)
	}
	return nil
}
