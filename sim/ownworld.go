package sim

import (
	"fmt"

	"github.com/cachelab/cachelab/listwatch"
	"github.com/cachelab/cachelab/sim/scenario"
	"github.com/cachelab/cachelab/sim/trace"
	"github.com/cachelab/cachelab/sim/world"
)

// ownWorld is kube-apiserver's storage on an etcd, as the runner's own
// fields keep it (worlds.go): the etcd world (listwatch, the watch cache
// off), the watch cache in process (apistorage) or over HTTPS
// (kubeapiserver), on the embedded etcd or an external one.
type ownWorld struct {
	quietWorld
	r *runner
	// kv is what its writers write to: etcd, through a connection or
	// in process (listwatch.LocalKV).
	kv listwatch.KV
	// raw is pods' writer, which put-raw and delete-raw write through
	// too; writers are the other resources', each made at its first
	// write.
	raw     *listwatch.Writer
	writers map[string]objectWriter
}

func (w *ownWorld) connect() error { return w.r.connectOwn(w) }

// writer: every resource's writes go to etcd, each through a writer of
// its own, with one sequence of UIDs over all (runner.writerOptions).
func (w *ownWorld) writer(name string) (objectWriter, error) {
	if name == scenario.DefaultResource {
		return w.raw, nil
	}
	wr := w.writers[name]
	if wr == nil {
		lw := listwatch.NewWriter(w.kv, w.r.resourceNamed(name), w.r.writerOptions())
		wr = lw
		if _, ok := w.r.custom(name); ok {
			var err error
			if wr, err = w.r.customWriter(lw, name); err != nil {
				return nil, err
			}
		}
		if w.writers == nil {
			w.writers = map[string]objectWriter{}
		}
		w.writers[name] = wr
	}
	return wr, nil
}

func (w *ownWorld) describe(h *trace.Header) {
	if e := w.r.etcd; e != nil && e.Members() > 1 {
		h.Etcd = fmt.Sprintf("embedded, %d members", e.Members())
	}
}

// server is kube-apiserver over HTTPS (the side's own HTTP client), its
// watch cache in process (the kube-apiserver the informers use now), or
// etcd through listwatch on the side's own connection: a second
// informer's sides dial connections of their own, as start's have, so
// that a progress request reaches only that informer's watches.
func (w *ownWorld) server(label string, res *listwatch.Resource, i int, impl, user string, rec *trace.Recorder) (func(ns string) world.Server, int, error) {
	r := w.r
	name := func() string { return res.Resource[len(r.ownPrefix):] } // as the scenario names it
	switch {
	case r.opts.Wire:
		return func(ns string) world.Server { return r.wire(impl, user, name(), rec).Server(ns) }, i + 1, nil
	case r.cached():
		return func(ns string) world.Server { return r.apis[r.using].of(name()).ListerWatcher(ns) }, i + 1, nil
	}
	client := i + 1
	if label != "" {
		if _, err := r.dial(i + 1); err != nil {
			return nil, 0, err
		}
		client = len(r.clients) - 1
	}
	lw := listwatch.NewListerWatcher(r.clients[client], *res, listwatch.Options{Clock: r.worldClock()})
	if len(r.sides) > 0 {
		// The server's features are the server's: an informer made after
		// a server lever meets the server as start's informer does.
		if b, ok := r.sides[0].conn.Base().(*listwatch.ListerWatcher); ok {
			lw.SetWatchListFeature(b.WatchListFeature())
		}
	}
	return func(ns string) world.Server { return lw.WithResource(*res).WithNamespace(ns) }, client, nil
}

func (w *ownWorld) revision() (int64, error) {
	resp, err := w.r.client.Get(w.r.ctx, "cachelab-revision-probe")
	if err != nil {
		return 0, err
	}
	return resp.Header.Revision, nil
}

// reached: from etcd, a side has had rev once its reflector's
// resourceVersion is rev, by an event or, when its selectors filter the
// write out, the progress bookmark settling asks for. From the watch
// cache, a filtered write sends nothing, and the cache sends bookmarks
// of its own when the clock moves: it has had all once the cache has
// taken in rev and has nothing in flight (apistorage's Quiescent).
func (w *ownWorld) reached(s *side, rev int64) bool {
	r := w.r
	if !r.cached() {
		return atLeast(s.inf.lastSyncRV(), rev)
	}
	return r.cachesCaughtUp(rev) && r.cachesQuiescent() && s.conn.Delivered() && r.wireIdle(s)
}

func (w *ownWorld) listAt(cfg *startConfig, rv string) (map[string]string, error) {
	return w.r.listEtcdAt(cfg, rv)
}

func (w *ownWorld) cutters() ([]cutter, string) {
	if w.r.wiring == nil {
		return nil, ""
	}
	var cs []cutter
	for _, px := range w.r.wiring.proxies {
		cs = append(cs, px)
	}
	return cs, "kube-apiserver"
}

// ownEtcd reports whether the run's world is etcd read through
// listwatch: no watch cache, no cluster, no recording.
func (r *runner) ownEtcd() bool {
	_, own := r.where.(*ownWorld)
	return own && !r.cached()
}
