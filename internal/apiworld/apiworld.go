// Package apiworld starts, for a test, the whole over-the-wire world: an
// embedded etcd on loopback, kube-apiserver's storage over it (with or
// without its watch cache, on a fake clock), and kube-apiserver serving
// it over HTTPS on a port the kernel hands out. Start's server serves
// pods for reading; StartWritable's also takes writes and serves
// namespaces. Everything stops when the test ends.
package apiworld

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/cachelab/cachelab/apistorage"
	"github.com/cachelab/cachelab/internal/testdeadline"
	"github.com/cachelab/cachelab/kubeapiserver"
	"github.com/cachelab/cachelab/listwatch"
)

// Epoch is where the world's fake clock starts, and every object's
// creationTimestamp.
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// TB is what starting a world needs of a test: a testing.TB, or a
// script's stand-in for one.
type TB interface {
	Helper()
	Fatal(args ...any)
	Cleanup(func())
}

// ClusterResources are what StartCluster's server serves beside
// namespaces, pods first: what a run on a cluster writes, and
// deployments, which a run does not write there but a recording reads.
var ClusterResources = []listwatch.Resource{listwatch.Pods, listwatch.ConfigMaps, listwatch.Secrets, listwatch.Deployments}

// NamespaceResource is the core group's namespaces, cluster-scoped.
var NamespaceResource = listwatch.Resource{Version: "v1", Resource: "namespaces", Kind: "Namespace"}

// World is one test's etcd, storage and server.
type World struct {
	Etcd    *listwatch.Embedded
	Writer  *listwatch.Writer
	Clock   *clocktesting.FakeClock
	Storage *apistorage.Server
	// Namespaces is the storage of namespaces, without a watch cache;
	// nil unless the world was started by StartWritable.
	Namespaces *apistorage.Server
	Server     *kubeapiserver.Server
}

// Start starts a world serving pods, for reading; cache puts the watch
// cache in front of etcd.
func Start(t testing.TB, cache bool) *World {
	t.Helper()
	return start(t, cache, false, false)
}

// StartWritable starts a world whose server takes writes (creates,
// updates and deletes of pods) and serves namespaces (created and
// deleted as kube-apiserver's are, without a namespace controller: see
// kubeapiserver.Options); cache puts the watch cache in front of etcd
// for pods. The server creates a pod only in a namespace that exists:
// create the namespace first, through the server (Namespace is one).
// Create writes pods to etcd past the server, in any namespace.
func StartWritable(t testing.TB, cache bool) *World {
	t.Helper()
	return start(t, cache, true, false)
}

// StartCluster starts a world as a cluster runs: StartWritable's, with
// the watch cache, on the wall clock (World.Clock is nil), serving
// configmaps, secrets and deployments as well as pods
// (ClusterResources). A client
// reaches it through a kubeconfig, as it reaches a kind cluster; what it
// does not have is a cluster's controllers (see kubeapiserver.Options).
func StartCluster(t TB) *World {
	t.Helper()
	return start(t, true, true, true)
}

func start(t TB, cache, writable, wallClock bool) *World {
	t.Helper()
	// Only the test binary's deadline bounds the start (package
	// testdeadline): how long etcd and the caches take grows with the
	// machine's load.
	ctx := testdeadline.Context(t)
	e, err := listwatch.StartEmbedded(ctx, listwatch.EmbeddedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	n := 0
	w := listwatch.NewWriter(e.Client(), listwatch.Pods, listwatch.WriterOptions{
		NewUID: func() types.UID { n++; return types.UID(fmt.Sprintf("uid-%d", n)) },
		Now:    func() time.Time { return Epoch },
	})
	var clk *clocktesting.FakeClock
	var storageClock clock.WithTicker = clock.RealClock{}
	if !wallClock {
		clk = clocktesting.NewFakeClock(Epoch)
		storageClock = clk
	}
	st, err := apistorage.New(ctx, e.Client(), listwatch.Pods, apistorage.Options{Cache: cache, Clock: storageClock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	wd := &World{Etcd: e, Writer: w, Clock: clk, Storage: st}
	opts := kubeapiserver.Options{}
	if writable {
		wd.Namespaces, err = apistorage.New(ctx, e.Client(), NamespaceResource, apistorage.Options{Clock: storageClock})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(wd.Namespaces.Close)
		opts.Writes, opts.Namespaces = true, wd.Namespaces
	}
	if wallClock {
		for _, res := range ClusterResources[1:] {
			also, err := apistorage.New(ctx, e.Client(), res, apistorage.Options{Cache: cache, Clock: storageClock})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(also.Close)
			opts.Also = append(opts.Also, also)
		}
	}
	wd.Server, err = kubeapiserver.New(ctx, st, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(wd.Server.Close) // first: the server ends its watches before the storages stop
	if wallClock {
		wd.otherWriters(t)
	}
	return wd
}

// otherWriters writes, until the test ends, what a cluster's other
// components keep writing: a node's lease, renewed every 5 ms (a real
// cluster renews each node's every 10 s, and has events, endpoints and
// more). Each renewal moves etcd's revision, as on a cluster, between
// any two writes of a client: a client that expects a revision the next
// write of its own will get, or that waits to reach etcd's revision
// through a watch of its own objects, meets it here as it would there.
func (wd *World) otherWriters(t TB) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for n := 0; ; n++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			lease := fmt.Sprintf(`{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"node-1","namespace":"kube-node-lease"},"spec":{"renewals":%d}}`, n)
			_, _ = wd.Etcd.Client().Put(ctx, "/registry/leases/kube-node-lease/node-1", lease)
		}
	}()
	t.Cleanup(func() { cancel(); <-done }) // before etcd stops: cleanups run last first
}

// Namespace is a namespace, to create through the server.
func Namespace(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("Namespace")
	u.SetName(name)
	return u
}

// Pod is a pod with labels.
func Pod(ns, name string, labels map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("Pod")
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetLabels(labels)
	return u
}

// Create writes objects to etcd, in order.
func (wd *World) Create(t testing.TB, objs ...*unstructured.Unstructured) {
	t.Helper()
	for _, o := range objs {
		if _, err := wd.Writer.Create(context.Background(), o); err != nil {
			t.Fatal(err)
		}
	}
}

// CreateN writes n pods, pod-000000 and on, spread over 10 namespaces
// and 10 "app" labels, 100 to an etcd transaction: a large world quickly
// (each transaction is one revision).
func (wd *World) CreateN(t testing.TB, n int) {
	t.Helper()
	ctx := context.Background()
	for start := 0; start < n; start += 100 {
		var ops []clientv3.Op
		for i := start; i < min(start+100, n); i++ {
			u := Pod(fmt.Sprintf("ns-%d", i%10), fmt.Sprintf("pod-%06d", i), map[string]string{"app": fmt.Sprintf("app-%d", i%10)})
			b, err := json.Marshal(u.Object)
			if err != nil {
				t.Fatal(err)
			}
			ops = append(ops, clientv3.OpPut("/registry/pods/"+u.GetNamespace()+"/"+u.GetName(), string(b)))
		}
		if _, err := wd.Etcd.Client().Txn(ctx).Then(ops...).Commit(); err != nil {
			t.Fatal(err)
		}
	}
}

// Settle waits until the watch cache has taken in everything etcd has
// and has nothing in flight (apistorage's barrier), polling every
// millisecond until the test binary's deadline at most (package
// testdeadline): after a write, or a step of the clock, every event and
// bookmark the server will send for it is on its way to the clients.
//
// In a world that serves namespaces, a namespace's write moves etcd's
// revision on without an event for the pods' cache, which hears of the
// revision only from a progress notification. The cacher asks etcd for
// one when a consistent read waits for it, on its clock (every 100 ms of
// a scenario's time: until the clock moves, that read waits); Settle asks
// for one at once, as etcd would send one unasked after a while.
func (wd *World) Settle(t testing.TB) {
	t.Helper()
	rev, err := wd.Etcd.Revision(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if wd.Namespaces != nil && !wd.Storage.CacheCaughtUp(uint64(rev)) {
		if err := wd.Storage.RequestProgress(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	deadline := testdeadline.Context(t)
	for !wd.Storage.CacheCaughtUp(uint64(rev)) || !wd.Storage.Quiescent() {
		if deadline.Err() != nil {
			t.Fatalf("the watch cache did not settle at revision %d by the test binary's deadline", rev)
		}
		time.Sleep(time.Millisecond)
	}
}

// Step moves the clock on by d, one second at a time, settling after
// each: the watch cache's timers tick every second of it.
func (wd *World) Step(t testing.TB, d time.Duration) {
	t.Helper()
	for ; d > 0; d -= time.Second {
		wd.Clock.Step(min(d, time.Second))
		wd.Settle(t)
	}
}

// HTTPClient is what a client of user needs to reach the world's server:
// client-go's configuration and an HTTP client over one transport of its
// own, whose idle connections are closed when the test ends.
func (wd *World) HTTPClient(t TB, user string) (*rest.Config, *http.Client) {
	t.Helper()
	cc, err := wd.Server.Client(user)
	if err != nil {
		t.Fatal(err)
	}
	cfg := cc.REST()
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { utilnet.CloseIdleConnectionsFor(hc.Transport) })
	return cfg, hc
}
