package sim

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"time"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/cachelab/cachelab/listwatch"
	"github.com/cachelab/cachelab/sim/scenario"
	"github.com/cachelab/cachelab/sim/trace"
	"github.com/cachelab/cachelab/sim/world"
)

// etcdWorld is kube-apiserver's storage with its watch cache off
// (--server etcd): the informers read etcd through listwatch, each side
// on a connection of its own, and the scenario's writes go to etcd. It is
// the storage under the other worlds of the run's own as well: the watch
// cache (cacheWorld) and kube-apiserver over HTTPS (httpsWorld) are this
// world with more in front. The etcd is the embedded one, or an external
// one (--etcd-endpoints) on which the run keeps to a key prefix of its
// own.
type etcdWorld struct {
	quietWorld
	r *runner
	// etcd is the embedded etcd, nil on an external one.
	etcd *listwatch.Embedded
	// prefix starts the name of every resource the run writes on an
	// external etcd, and so every key (resourceNamed); "" on the
	// embedded one.
	prefix string
	// clients are the connections to etcd: the world's own (writes,
	// compaction, revision) first, then the sides' and each
	// kube-apiserver's; dial makes the next, in a cluster with its
	// member order (clusterlevers.go).
	clients []*clientv3.Client
	dial    func(i int) (*clientv3.Client, error)
	// cluster is the etcd cluster's state the levers keep
	// (clusterlevers.go); nil on a single member.
	cluster *clusterState
	// kv is what its writers write to: etcd, through a connection or
	// in process (listwatch.LocalKV).
	kv listwatch.KV
	// raw is pods' writer, which put-raw and delete-raw write through
	// too; writers are the other resources', each made at its first
	// write.
	raw     *listwatch.Writer
	writers map[string]objectWriter
	// copy keeps what etcd holds in the informer's scope (given by
	// copyScope) from one step's invariants to the next (listAt).
	copy      *listwatch.ListCopy[keyedObject]
	copyScope string
	copyFrom  unsafe.Pointer    // the copy's map that copyOut was made from
	copyOut   map[string]string // key -> description, as the invariants compare it
}

// storageWorld is a world of kube-apiserver's storage on an etcd: the
// part its levers act on (levers.go).
type storageWorld interface{ storage() *etcdWorld }

func (w *etcdWorld) storage() *etcdWorld { return w }

func (w *etcdWorld) connect() error {
	if err := w.open(); err != nil {
		return err
	}
	return w.r.startPair()
}

// open starts the embedded etcd (or connects to the external one), gives
// the world, each side and kube-apiserver a connection, and makes pods'
// writer.
func (w *etcdWorld) open() error {
	r := w.r
	endpoints := r.opts.Etcd.Endpoints
	if len(endpoints) == 0 {
		e, err := listwatch.StartEmbedded(r.ctx, listwatch.EmbeddedOptions{Members: r.members(), Dir: r.opts.EtcdDir, TempDir: r.opts.EtcdTempDir, Logger: r.opts.EtcdLogger,
			ProgressNotifyInterval: r.opts.progressNotify})
		if err != nil {
			return err
		}
		w.etcd = e
		endpoints = e.Endpoints()
	} else {
		if r.opts.EtcdMembers > 1 {
			return fmt.Errorf("an etcd cluster of %d members needs the embedded etcd; this run uses an external one", r.opts.EtcdMembers)
		}
		// Never touch a real cluster's pods: an external run keeps to
		// its own prefix, and starts and ends with it empty.
		w.prefix = fmt.Sprintf("cachelab-sim-%d-", time.Now().UnixNano())
		r.res = r.resourceNamed(scenario.DefaultResource)
	}
	copts := r.opts.Etcd
	copts.Endpoints = endpoints
	if w.etcd != nil {
		copts = w.etcd.ClientOptions() // its endpoints, and the run's client certificate
	}
	w.dial = func(i int) (*clientv3.Client, error) {
		o := copts
		if w.etcd != nil && w.etcd.Members() > 1 {
			// Each in its own order, each served by one member at a
			// time (clusterlevers.go).
			o.Endpoints, o.InOrder = clusterEndpoints(i, endpoints), true
		}
		c, err := listwatch.Connect(r.ctx, o)
		if err != nil {
			return nil, err
		}
		w.clients = append(w.clients, c)
		// The next connections check first the endpoint that answered:
		// one that is down costs its dial timeout once, not three times.
		copts.Endpoints = c.Endpoints()
		return c, nil
	}
	for i := range 4 { // the world's, cachelab's, client-go's and kube-apiserver's connections
		if _, err := w.dial(i); err != nil {
			return err
		}
	}
	// One embedded etcd takes the scenario's writes in process, at less
	// than half a connection's CPU (listwatch.LocalKV); the informers'
	// requests and watches, and kube-apiserver's, stay on connections.
	var kv listwatch.KV = w.client()
	if w.etcd != nil && w.etcd.LocalKV() != nil {
		kv = w.etcd.LocalKV()
	}
	w.kv = kv
	w.raw = listwatch.NewWriter(kv, r.res, r.writerOptions())
	return nil
}

// client is the world's own connection: writes, compaction, revision.
func (w *etcdWorld) client() *clientv3.Client { return w.clients[0] }

// keyPrefix is where the run writes in an external etcd: the start of
// the key of every object of every resource it writes there.
func (w *etcdWorld) keyPrefix() string { return "/registry/" + w.prefix }

// ownKeys: the run's keys have a prefix of their own on an external
// etcd; on the embedded one, every key is the run's.
func (w *etcdWorld) ownKeys() string {
	if w.etcd != nil || w.prefix == "" {
		return ""
	}
	return w.keyPrefix()
}

// placed is res under the run's prefix on an external etcd.
func (w *etcdWorld) placed(res listwatch.Resource) listwatch.Resource {
	if w.prefix != "" {
		res.Resource = w.prefix + res.Resource
		if res.Store != "" {
			res.Store = w.prefix + res.Store
		}
	}
	return res
}

// asksProgress: the sides watch etcd itself.
func (w *etcdWorld) asksProgress() bool { return true }

// applied: see memberApplied.
func (w *etcdWorld) applied(s *side, rev int64) bool { return w.memberApplied(s, rev) }

// writer: every resource's writes go to etcd, each through a writer of
// its own, with one sequence of UIDs over all (runner.writerOptions).
func (w *etcdWorld) writer(name string) (objectWriter, error) {
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

func (w *etcdWorld) describe(h *trace.Header) {
	if e := w.etcd; e != nil && e.Members() > 1 {
		h.Etcd = fmt.Sprintf("embedded, %d members", e.Members())
	}
}

// server is etcd through listwatch on the side's own connection: a
// second informer's sides dial connections of their own, as start's
// have, so that a progress request reaches only that informer's watches.
func (w *etcdWorld) server(label string, res *listwatch.Resource, i int, impl, user string, rec *trace.Recorder) (func(ns string) world.Server, int, error) {
	r := w.r
	client := i + 1
	if label != "" {
		if _, err := w.dial(i + 1); err != nil {
			return nil, 0, err
		}
		client = len(w.clients) - 1
	}
	lw := listwatch.NewListerWatcher(w.clients[client], *res, listwatch.Options{Clock: r.worldClock()})
	if len(r.sides) > 0 {
		// The server's features are the server's: an informer made after
		// a server lever meets the server as start's informer does.
		if b, ok := r.sides[0].conn.Base().(*listwatch.ListerWatcher); ok {
			lw.SetWatchListFeature(b.WatchListFeature())
		}
	}
	return func(ns string) world.Server { return lw.WithResource(*res).WithNamespace(ns) }, client, nil
}

// named is the resource res as a scenario names it, without the run's
// prefix.
func (w *etcdWorld) named(res *listwatch.Resource) string { return res.Resource[len(w.prefix):] }

func (w *etcdWorld) revision() (int64, error) {
	resp, err := w.client().Get(w.r.ctx, "cachelab-revision-probe")
	if err != nil {
		return 0, err
	}
	return resp.Header.Revision, nil
}

// reached: a side has had rev once its reflector's resourceVersion is
// rev, by an event or, when its selectors filter the write out, the
// progress bookmark settling asks for.
func (w *etcdWorld) reached(s *side, rev int64) bool { return atLeast(s.inf.lastSyncRV(), rev) }

// listAt reads etcd at rv through a copy of the informer's LIST that
// reads only what was written since its last read (listwatch.ListCopy),
// so that a step's check costs what the step wrote. Where the copy
// cannot read (a compacted revision, a value that does not decode), the
// LIST itself says why, in the words an informer would get.
func (w *etcdWorld) listAt(cfg *startConfig, rv string) (map[string]string, error) {
	ctx := w.r.ctx
	lw := listwatch.NewListerWatcher(w.client(), cfg.res, listwatch.Options{Namespace: cfg.namespace})
	opts := metav1.ListOptions{LabelSelector: cfg.labels, FieldSelector: cfg.fields}
	scope := cfg.scope()
	if w.copy == nil || w.copyScope != scope {
		w.copy, w.copyScope, w.copyFrom = listwatch.NewListCopy(lw, opts, keyed), scope, nil
	}
	if rev, err := strconv.ParseInt(rv, 10, 64); err == nil {
		if objs, err := w.copy.At(ctx, rev); err == nil {
			// The copy hands out the same map while etcd's content in
			// the scope stays the same; so is what it is made into.
			if p := reflect.ValueOf(objs).UnsafePointer(); p != w.copyFrom {
				out := make(map[string]string, len(objs))
				for _, o := range objs {
					out[o.key] = o.desc
				}
				w.copyFrom, w.copyOut = p, out
			}
			return w.copyOut, nil
		}
	}
	opts.ResourceVersion, opts.ResourceVersionMatch = rv, metav1.ResourceVersionMatchExact
	l, err := lw.ListWithContext(ctx, opts)
	if err != nil {
		return nil, errors.New(world.DescribeErr(err))
	}
	out := map[string]string{}
	for _, it := range l.(*unstructured.UnstructuredList).Items {
		out[trace.KeyOf(&it)] = trace.Describe(&it)
	}
	return out, nil
}

// forget drops what the invariants kept of etcd: its revisions come
// again with other content (a restore, a wipe).
func (w *etcdWorld) forget() { w.copy, w.copyFrom = nil, nil }

// end removes the run's keys from an external etcd, within limit:
// close runs when a signal stops the run, and an etcd that stopped
// answering must not keep the process from exiting.
func (w *etcdWorld) end(limit time.Duration) {
	if w.etcd != nil || len(w.clients) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), min(limit, 10*time.Second))
	_, _ = w.client().Delete(ctx, w.keyPrefix(), clientv3.WithPrefix())
	cancel()
}

// abandon stops the embedded etcd, or, stuck, removes its data.
func (w *etcdWorld) abandon() {
	if w.etcd == nil {
		return
	}
	closed := make(chan struct{})
	go func() { defer close(closed); _ = w.etcd.Stop() }()
	select {
	case <-closed:
	case <-time.After(2 * time.Second):
		_ = os.RemoveAll(w.etcd.Dir()) // etcd is stuck; the process is about to end it
	}
}

func (w *etcdWorld) close() {
	for _, c := range w.clients {
		_ = c.Close()
	}
	switch {
	case w.etcd != nil && w.r.opts.QuickClose:
		_ = w.etcd.Stop()
	case w.etcd != nil:
		_ = w.etcd.Close()
	}
}

// memberApplied reports whether the etcd member serving the side's
// connection has applied etcd's revision rev (always, on one member). In
// a cluster a member follows the leader a moment behind, and asked for
// progress before it has applied rev it reports the revision it has: a
// bookmark at rv 2 for etcd's rv 3, and settling asks again. How many
// bookmarks a side got would depend on that moment (fuzz seed 9: two for
// cachelab, one for client-go).
func (w *etcdWorld) memberApplied(s *side, rev int64) bool {
	e := w.etcd
	if e == nil || e.Members() < 2 {
		return true
	}
	ctx, cancel := context.WithTimeout(w.r.ctx, time.Second)
	defer cancel()
	m, err := e.MemberServing(ctx, w.clients[s.client])
	if err != nil {
		return true // let the request go: its answer says what it says
	}
	got, err := e.MemberRevision(ctx, m)
	return err != nil || got >= rev
}
