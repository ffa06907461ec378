package sim

import (
	"context"
	"fmt"

	"github.com/cachelab/cachelab/listwatch"
	"github.com/cachelab/cachelab/sim/scenario"
	"github.com/cachelab/cachelab/sim/trace"
	"github.com/cachelab/cachelab/sim/world"
)

// The levers of the watch-cache world: kube-apiserver's cache falling
// behind etcd, and catching up; a kube-apiserver restarting; a second
// kube-apiserver over the same etcd, and the informers' connections moving
// to it (as behind a load balancer). A real cache lags etcd by the moment
// it takes to take in each event; these levers stretch that moment for as
// long as a scenario needs to show what a request answered from the cache
// then gets. Each lever that acts on one kube-apiserver takes its number
// (1, the first, or 2 after add-apiserver); without one, it acts on the
// one the informers talk to.

// apiserver is the kube-apiserver a lever acts on, and its name in the
// trace ("" when the run has one).
func (w *cacheWorld) apiserver(a scenario.Args) (world.APIServer, string, error) {
	n, given, err := a.APIServer()
	if err != nil {
		return nil, "", err
	}
	if !given {
		n = w.using + 1
	}
	if n > len(w.apis) {
		return nil, "", fmt.Errorf("there is no kube-apiserver %d: add-apiserver starts the second", n)
	}
	name := ""
	if len(w.apis) > 1 {
		name = fmt.Sprintf("apiserver-%d", n)
	}
	return w.apis[n-1], name, nil
}

// onCache pulls a lever on a kube-apiserver's watch cache, and notes what
// it did with etcd's revision: do says it, given the cache's owner (""
// when the run has one kube-apiserver, else "apiserver-N's "); lever
// names it (trace.Lever*).
func (w *cacheWorld) onCache(a scenario.Args, lever string, do func(api world.APIServer, owner string, rev int64) (string, error)) error {
	r := w.r
	api, name, err := w.apiserver(a)
	if err != nil {
		return err
	}
	rev, err := r.revision()
	if err != nil {
		return err
	}
	owner := ""
	if name != "" {
		owner = name + "'s "
	}
	msg, err := do(api, owner, rev)
	if err != nil {
		return err
	}
	r.noteLever(trace.LayerCache, lever, msg)
	return nil
}

func holdCache(w *cacheWorld, a scenario.Args) error {
	return w.onCache(a, trace.LeverHoldCache, func(api world.APIServer, owner string, rev int64) (string, error) {
		api.HoldCache()
		return fmt.Sprintf("%swatch cache held at rv %d: etcd's events wait until release-cache", owner, rev), nil
	})
}

func releaseCache(w *cacheWorld, a scenario.Args) error {
	r := w.r
	return w.onCache(a, trace.LeverReleaseCache, func(api world.APIServer, owner string, rev int64) (string, error) {
		api.ReleaseCache()
		// A cache held since a restart now lists etcd. The LISTs held at
		// it go again only once it is ready: let through at once, a retry
		// could reach it before or after, by the scheduler's say, and get
		// 429 on one side and the list on the other.
		if err := r.waitReady(api); err != nil {
			return "", err
		}
		r.etcdChanged() // a LIST held at an unready cache goes again, when the step settles
		return fmt.Sprintf("%swatch cache released: it catches up with etcd at rv %d", owner, rev), nil
	})
}

// waitReady waits, for at most the settle timeout, until api's watch
// cache has listed etcd and is ready.
func (r *runner) waitReady(api world.APIServer) error {
	ctx, cancel := context.WithTimeout(r.ctx, r.opts.SettleTimeout)
	defer cancel()
	return api.WaitReady(ctx)
}

func restartAPIServer(w *cacheWorld, a scenario.Args) error {
	r := w.r
	api, who, err := w.apiserver(a)
	if err != nil {
		return err
	}
	// The old cache ends every watch, and the informers re-watch at
	// once: their calls wait (world.Conn.Pause) until the new cache has
	// listed etcd, so that they meet a ready cache on every run, not
	// sometimes a cache that answers 429 for a moment. A cache held from
	// starting is not ready until release-cache: they meet it unready.
	for _, s := range r.sides {
		s.conn.Pause()
	}
	defer func() {
		for _, s := range r.sides {
			s.conn.Resume()
		}
	}()
	r.asWorld(func() { err = api.RestartCache() })
	if err != nil {
		return err
	}
	if who == "" {
		who = "kube-apiserver"
	}
	// The new cache lists etcd at once, unless it is held: the trace says
	// which, not how far the list got when the lever returned.
	if !api.Held() {
		if err := r.waitReady(api); err != nil {
			return err
		}
	}
	if api.Ready() {
		r.noteLever(trace.LayerCache, trace.LeverRestartAPIServer, who+" restarted: its watch cache ended every watch and listed etcd again")
	} else {
		r.noteLever(trace.LayerCache, trace.LeverRestartAPIServer, who+" restarted: its watch cache ended every watch; it is not ready until it has listed etcd")
	}
	return nil
}

func addAPIServer(w *cacheWorld, a scenario.Args) error {
	r := w.r
	if len(w.apis) >= scenario.MaxAPIServers {
		return fmt.Errorf("this run has %d kube-apiservers already, the most a scenario may have", len(w.apis))
	}
	// Its own connection to etcd, as a kube-apiserver of its own has: on
	// a cluster, in the order kube-apiserver's first takes them.
	copts := r.opts.Etcd
	if w.etcd != nil {
		copts = w.etcd.ClientOptions()
	}
	copts.Endpoints = w.clients[0].Endpoints()
	if w.etcd != nil && w.etcd.Members() > 1 {
		copts.Endpoints, copts.InOrder = clusterEndpoints(len(w.clients), w.etcd.Endpoints()), true
	}
	c, err := listwatch.Connect(r.ctx, copts)
	if err != nil {
		return err
	}
	w.clients = append(w.clients, c)
	n := len(w.apis) + 1
	if _, err := w.start(c, fmt.Sprintf("apiserver-%d", n)); err != nil {
		return err
	}
	w.apis[0].SetName("apiserver-1")
	rev, err := r.revision()
	if err != nil {
		return err
	}
	r.note(trace.LayerCache, "", fmt.Sprintf("apiserver-%d started over the same etcd: its watch cache listed etcd at rv %d; the informers still talk to apiserver-%d", n, rev, w.using+1))
	return nil
}

func useAPIServer(w *cacheWorld, a scenario.Args) error {
	r := w.r
	n, _, err := a.APIServer()
	if err != nil {
		return err
	}
	if n > len(w.apis) {
		return fmt.Errorf("there is no kube-apiserver %d: add-apiserver starts the second", n)
	}
	w.using = n - 1
	for _, s := range r.sides {
		s.conn.UseServer()
	}
	r.note(trace.LayerCache, "", fmt.Sprintf("the informers' connections now go to apiserver-%d: their next requests are served there (open watches stay where they are)", n))
	return nil
}
