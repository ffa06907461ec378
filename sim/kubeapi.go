package sim

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/cachelab/cachelab/listwatch"
	"github.com/cachelab/cachelab/sim/scenario"
	"github.com/cachelab/cachelab/sim/world"
)

// kubeAPIServer is one kube-apiserver of the run's own, as the
// watch-cache world has it: kube-apiserver's storage with its watch
// cache (world.APIServer, package apistorage) for each resource the
// scenario writes or watches, pods first, each with its own watch of
// etcd, as a real kube-apiserver has a cacher per resource. It is itself
// a world.APIServer: a watch-cache lever acts on the whole
// kube-apiserver (a held or restarted kube-apiserver holds or restarts
// every resource's cache), settling waits for every cache, and what it
// says of its cache is its pods cache's, so a run of pods alone reads
// as it did when a kube-apiserver served nothing else.
type kubeAPIServer struct {
	names []string // the resources, as a scenario names them, pods first
	by    map[string]world.APIServer
	// asked is when settling last asked each cache's watch of etcd for
	// progress, by resource (catchUp).
	asked map[string]time.Time
}

// resourcesOf are the resources sc writes or watches, pods first, in the
// order of scenario.Resources.
func resourcesOf(sc *scenario.Scenario) []string {
	used := map[string]bool{scenario.DefaultResource: true}
	for _, st := range sc.Steps {
		a, _ := scenario.ParseArgs(st) // Parse checked them
		if a.Resource != "" {
			used[a.Resource] = true
		}
		if res, _ := a.Owner(); res != "" {
			used[res] = true
		}
	}
	var out []string
	names := slices.Clone(scenario.Resources)
	for _, c := range sc.CustomResources {
		names = append(names, c.Plural)
	}
	for _, name := range names {
		if used[name] {
			out = append(out, name)
		}
	}
	return out
}

// newKubeAPIServer starts a kube-apiserver's storage for each of the
// resources, with start to start one.
func newKubeAPIServer(names []string, start func(name string) (world.APIServer, error)) (*kubeAPIServer, error) {
	k := &kubeAPIServer{by: map[string]world.APIServer{}, asked: map[string]time.Time{}}
	for _, name := range names {
		api, err := start(name)
		if err != nil {
			k.Close()
			return nil, err
		}
		k.names = append(k.names, name)
		k.by[name] = api
	}
	return k, nil
}

// pods is the pods storage, which speaks for the kube-apiserver.
func (k *kubeAPIServer) pods() world.APIServer { return k.by[scenario.DefaultResource] }

// of is the storage of a resource, by the name a scenario gives it.
func (k *kubeAPIServer) of(name string) world.APIServer { return k.by[name] }

// members are every resource's storage, pods first.
func (k *kubeAPIServer) members() []world.APIServer {
	out := make([]world.APIServer, len(k.names))
	for i, n := range k.names {
		out[i] = k.by[n]
	}
	return out
}

func (k *kubeAPIServer) each(f func(world.APIServer)) {
	for _, n := range k.names {
		f(k.by[n])
	}
}

func (k *kubeAPIServer) all(f func(world.APIServer) bool) bool {
	for _, n := range k.names {
		if !f(k.by[n]) {
			return false
		}
	}
	return true
}

func (k *kubeAPIServer) ListerWatcher(ns string) world.Server { return k.pods().ListerWatcher(ns) }
func (k *kubeAPIServer) Resource() listwatch.Resource         { return k.pods().Resource() }
func (k *kubeAPIServer) SetName(name string)                  { k.each(func(a world.APIServer) { a.SetName(name) }) }
func (k *kubeAPIServer) HoldCache()                           { k.each(world.APIServer.HoldCache) }
func (k *kubeAPIServer) ReleaseCache()                        { k.each(world.APIServer.ReleaseCache) }
func (k *kubeAPIServer) Held() bool                           { return k.pods().Held() }
func (k *kubeAPIServer) Ready() bool                          { return k.all(world.APIServer.Ready) }
func (k *kubeAPIServer) CacheState() string                   { return k.pods().CacheState() }
func (k *kubeAPIServer) Close()                               { k.each(world.APIServer.Close) }

func (k *kubeAPIServer) RestartCache() error {
	var errs []error
	k.each(func(a world.APIServer) { errs = append(errs, a.RestartCache()) })
	return errors.Join(errs...)
}

func (k *kubeAPIServer) WaitReady(ctx context.Context) error {
	var errs []error
	k.each(func(a world.APIServer) { errs = append(errs, a.WaitReady(ctx)) })
	return errors.Join(errs...)
}

func (k *kubeAPIServer) QuiescentIn(stacks []string) bool {
	return k.all(func(a world.APIServer) bool { return a.QuiescentIn(stacks) })
}

func (k *kubeAPIServer) RequestProgress(ctx context.Context) error {
	var errs []error
	k.each(func(a world.APIServer) { errs = append(errs, a.RequestProgress(ctx)) })
	return errors.Join(errs...)
}

// NextWork is the soonest any cache has work to do on the clock.
func (k *kubeAPIServer) NextWork() (at time.Time, ok bool) {
	k.each(func(a world.APIServer) {
		if t, due := a.NextWork(); due && (!ok || t.Before(at)) {
			at, ok = t, true
		}
	})
	return at, ok
}

// CacheCaughtUp reports whether every resource's cache has taken in
// etcd's revision rev.
func (k *kubeAPIServer) CacheCaughtUp(rev uint64) bool {
	return k.all(func(a world.APIServer) bool { return a.CacheCaughtUp(rev) })
}

// catchUp asks the watch of etcd of each resource's cache that has not
// taken in rev for a progress notification: a write to another resource
// is no event on its watch, and only etcd's progress notification tells
// its cache that etcd has moved on. A real kube-apiserver's cache learns
// it the same way, when its progress requester or etcd's notify interval
// asks; the simulator asks at once, to settle, as it asks etcd for the
// informers' bookmarks in the etcd world, and again after reaskAfter of
// wall time if etcd's answer has not come: etcd answers a progress
// request only when every watch on the connection's stream has been sent
// all it has, and the caches of a kube-apiserver share one stream, so a
// request made while another resource's event is on its way is dropped.
// Its watchers hear nothing of it: the cache sends its bookmarks on its
// own clock (C3). (When etcd answers changes nothing but how long a step
// takes to settle.)
func (k *kubeAPIServer) catchUp(ctx context.Context, rev uint64) {
	if len(k.names) == 1 {
		return // pods alone: every write is an event on its watch
	}
	for _, n := range k.names {
		a := k.by[n]
		if a.Held() || a.CacheCaughtUp(rev) || time.Since(k.asked[n]) < reaskAfter {
			continue
		}
		k.asked[n] = time.Now()
		_ = a.RequestProgress(ctx) // a cache restarting asks again the next time round
	}
}

// reaskAfter is how long catchUp waits for etcd's answer before it asks
// again.
const reaskAfter = 20 * time.Millisecond

var _ world.APIServer = (*kubeAPIServer)(nil)
