package sim

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/cachelab/cachelab/cluster"
	"github.com/cachelab/cachelab/internal/apiworld"
	"github.com/cachelab/cachelab/sim/scenario"
	"github.com/cachelab/cachelab/sim/trace"
)

// A cluster for the tests: kube-apiserver in process, taking writes and
// serving namespaces as a cluster does, reached the way a user's cluster
// is, through a kubeconfig file (written here) that package cluster
// reads with client-go's loader. The path a run on kind takes, but for
// what the cluster is.
type testCluster struct {
	world *apiworld.World
	path  string // the kubeconfig
	c     *cluster.Cluster
	dyn   dynamic.Interface // the test's own look at it
}

func startTestCluster(t *testing.T) *testCluster {
	t.Helper()
	quietKlog() // the server logs through klog from its start
	wd := apiworld.StartCluster(t)
	cc, err := wd.Server.Client("admin")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := cc.WriteKubeconfig(path, "admin", ""); err != nil {
		t.Fatal(err)
	}
	c, err := cluster.Open(context.Background(), cluster.Options{Kubeconfig: path})
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfigAndClient(wd.HTTPClient(t, "admin"))
	if err != nil {
		t.Fatal(err)
	}
	return &testCluster{world: wd, path: path, c: c, dyn: dyn}
}

// leftovers is what runs left in the cluster: namespaces, and objects
// of every resource it serves in etcd under any namespace.
func (tc *testCluster) leftovers(t *testing.T) []string {
	t.Helper()
	var out []string
	nss, err := tc.dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range nss.Items {
		out = append(out, "namespace "+ns.GetName())
	}
	for _, res := range apiworld.ClusterResources {
		resp, err := tc.world.Etcd.Client().Get(context.Background(), "/registry/"+res.Resource+"/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
		if err != nil {
			t.Fatal(err)
		}
		for _, kv := range resp.Kvs {
			out = append(out, "etcd key "+string(kv.Key))
		}
	}
	return out
}

// Every built-in scenario a cluster can run (CheckCluster) runs on one
// through a kubeconfig: cachelab and client-go agree at every step, the
// run's namespace is made and deleted, and nothing is left behind.
func TestScenariosOnACluster(t *testing.T) {
	// Beside the other parallel tests once the serial ones have run
	// (parallel_test.go): its runs take their places among -parallel's.
	t.Parallel()
	tc := startTestCluster(t)
	files, err := filepath.Glob("scenarios/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	var scs []*scenario.Scenario
	for _, file := range files {
		sc, err := Load(file)
		if err != nil {
			t.Fatal(err)
		}
		if CheckCluster(sc) == nil {
			scs = append(scs, sc)
		}
	}
	// Side by side (parallel_test.go), each in its own namespace, as
	// runs of several users share a real cluster; what they leave behind
	// is looked for once they have all ended.
	t.Run("runs", func(t *testing.T) {
		for _, sc := range inStackOrder(scs, stackOf) {
			runOnCluster(t, tc, sc)
		}
	})
	if left := tc.leftovers(t); len(left) > 0 {
		t.Errorf("left in the cluster: %v", left)
	}
	if len(scs) < 20 {
		t.Errorf("only %d built-in scenarios run on a cluster", len(scs))
	}
}

// runOnCluster runs sc on tc's cluster, side by side with others, and
// checks that cachelab and client-go agree at every step. Each run opens
// the cluster itself, as each cachelab run does: one client shared by
// all would make them queue at its rate limiter (client-go's default 5
// requests a second, burst 10), one run's requests behind another's.
func runOnCluster(t *testing.T, tc *testCluster, sc *scenario.Scenario) {
	t.Run(filepath.Base(sc.File), func(t *testing.T) {
		parallelIn(t, stackOf(sc))
		c, err := cluster.Open(context.Background(), cluster.Options{Kubeconfig: tc.path})
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(context.Background(), sc, Options{Seed: 1, Cluster: c})
		if err != nil {
			t.Fatal(err)
		}
		if res.Divergence != nil {
			t.Fatal(res.Divergence)
		}
		if !strings.HasPrefix(res.Header.Cluster, c.Describe()+", namespace cachelab-") {
			t.Errorf("header's cluster = %q", res.Header.Cluster)
		}
	})
}

// runAgreeing runs sc on tc's cluster, and fails the test unless the run
// ended and client-go agreed at every step.
func (tc *testCluster) runAgreeing(t *testing.T, sc *scenario.Scenario) *Result {
	t.Helper()
	res, err := Run(context.Background(), sc, Options{Seed: 1, Cluster: tc.c})
	if err != nil {
		t.Fatal(err)
	}
	if res.Divergence != nil {
		t.Fatal(res.Divergence)
	}
	return res
}

// clusterHead is a test scenario's opening paragraph: three lines.
const clusterHead = "# A test.\n# Covers: P1\n\n"

// The levers that need a server's insides, and a second namespace, are
// refused before the first step, each with its reason and its line; the
// cluster is not touched.
func TestClusterRefuses(t *testing.T) {
	tc := startTestCluster(t)
	for _, tt := range []struct{ text, want string }{
		{"start\n----\n\ncompact\n----\n", "x.txt:7: compact cannot run on a cluster (--kubeconfig): it compacts etcd, and a cluster's etcd is not the run's"},
		{"hold-cache\n----\n", "x.txt:4: hold-cache cannot run on a cluster (--kubeconfig): it holds kube-apiserver's watch cache, and a cluster's is not the run's"},
		{"restart-etcd\n----\n", "x.txt:4: restart-etcd cannot run on a cluster (--kubeconfig): it stops and starts etcd, and a cluster's etcd is not the run's"},
		{"progress\n----\n", "x.txt:4: progress cannot run on a cluster (--kubeconfig): it asks etcd for a progress notification"},
		{"start fields=(metadata.namespace=ns0)\n----\n", "x.txt:4: start: a field selector on metadata.namespace cannot run on a cluster"},
		{"create ns0/a\n----\n\ncreate ns1/b\n----\n", "x.txt:7: create names namespace ns1 after ns0: on a cluster (--kubeconfig) a run has one namespace of its own"},
		{"start-controller writes\n----\n", "x.txt:4: start-controller writes cannot run on a cluster (--kubeconfig): the simulator decides a controller's writes"},
		{"bulk-create n=2\n----\n\nstart namespace=ns0\n----\n", "x.txt:7: start names namespace ns0 after bulk"},
		{"create deployments ns0/web\n----\n", "x.txt:4: create deployments cannot run on a cluster (--kubeconfig): it writes or watches deployments, and on a cluster its controllers would act on it"},
		{"start informer=deployments\n----\n", "x.txt:4: start deployments cannot run on a cluster (--kubeconfig): it writes or watches deployments"},
		{"create configmaps ns0/o\n----\n\ncreate configmaps ns0/c owner=configmaps/ns0/o\n----\n", "x.txt:7: create owner= cannot run on a cluster (--kubeconfig): it gives an object an owner, and a cluster's garbage collector"},
		{"gc\n----\n", "x.txt:4: gc cannot run on a cluster (--kubeconfig): a cluster's garbage collector sweeps on its own"},
	} {
		sc, err := scenario.Parse("x.txt", []byte(clusterHead+tt.text))
		if err != nil {
			t.Fatal(err)
		}
		_, err = Run(context.Background(), sc, Options{Cluster: tc.c})
		var refused *RefusedError
		if !errors.As(err, &refused) || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%q: got %v, want a refusal starting %q", tt.text, err, tt.want)
		}
	}
	if left := tc.leftovers(t); len(left) > 0 {
		t.Errorf("refused runs touched the cluster: %v", left)
	}
	// A run on a cluster has no server of its own to choose.
	sc, _ := scenario.Parse("x.txt", []byte(clusterHead+"start\n----\n"))
	if _, err := Run(context.Background(), sc, Options{Cluster: tc.c, Wire: true}); err == nil || !strings.Contains(err.Error(), "has no etcd or kube-apiserver of its own") {
		t.Errorf("--server with a cluster: %v", err)
	}
}

// Configmaps and secrets run on a cluster as pods do, in the run's
// namespace: written through the API, each watched by an informer of its
// own (start's and a factory's), cachelab and client-go compared at
// every step; both are deleted at the end with the namespace.
func TestClusterServesConfigMapsAndSecrets(t *testing.T) {
	tc := startTestCluster(t)
	sc, err := scenario.Parse("x.txt", []byte(clusterHead+`create secrets ns0/token data=(key=s3cret)
----

create configmaps ns0/settings data=(mode=dev)
----

start informer=secrets
----

factory f
----

informer f configmaps
----

factory-start f
----

update secrets ns0/token data=(key=rotated)
----

update configmaps ns0/settings data=(mode=prod) labels=(tier=web)
----

delete secrets ns0/token
----

create configmaps ns0/more
----

show store
----
`))
	if err != nil {
		t.Fatal(err)
	}
	res := tc.runAgreeing(t, sc)
	var seen []string
	for _, sr := range res.Steps {
		for _, e := range sr.Sides[trace.Cachelab] {
			if e.Layer == trace.LayerWatch && (e.Op == "ADDED" || e.Op == "MODIFIED" || e.Op == "DELETED") {
				seen = append(seen, e.Informer+" "+e.Op+" "+e.Key)
			}
		}
	}
	// Each informer hears of its own resource alone: start's of the
	// secret, the factory's of the configmaps.
	want := []string{" ADDED token", "f/configmaps ADDED settings", " MODIFIED token", "f/configmaps MODIFIED settings",
		" DELETED token", "f/configmaps ADDED more"}
	if len(seen) != len(want) {
		t.Fatalf("cachelab's watch events %q; want %d: %q", seen, len(want), want)
	}
	for i, w := range want {
		head, name, _ := strings.Cut(w, "D ")
		if !strings.HasPrefix(seen[i], head+"D ") || !strings.HasSuffix(seen[i], "/"+name) {
			t.Errorf("event %d: %q, want %q in the run's namespace", i, seen[i], w)
		}
	}
	if left := tc.leftovers(t); len(left) > 0 {
		t.Errorf("left in the cluster: %v", left)
	}
}

// Finalizers on a cluster are its kube-apiserver's: a delete marks the
// object (an update), the update that takes its last finalizer deletes
// it, and each informer hears each in the step that made it, whatever
// resourceVersion the deletion had (the update's answer does not say).
// An object the run leaves held by a finalizer has it taken off at the
// end, so that nothing of the run's is left, nor its namespace held.
func TestClusterFinalizers(t *testing.T) {
	tc := startTestCluster(t)
	sc, err := scenario.Parse("x.txt", []byte(clusterHead+`create configmaps ns0/held ns0/kept finalizers=(example.com/x)
----

start informer=configmaps
----

delete configmaps ns0/held
----

update configmaps ns0/held finalizers=()
----

delete configmaps ns0/kept
----
`))
	if err != nil {
		t.Fatal(err)
	}
	res := tc.runAgreeing(t, sc)
	want := map[int]string{3: "MODIFIED held", 4: "DELETED held", 5: "MODIFIED kept"}
	for _, sr := range res.Steps {
		var got []string
		for _, e := range sr.Sides[trace.Cachelab] {
			if e.Layer == trace.LayerWatch && (e.Op == "MODIFIED" || e.Op == "DELETED") {
				_, name, _ := strings.Cut(e.Key, "/")
				got = append(got, e.Op+" "+name)
			}
		}
		if w := want[sr.Index]; strings.Join(got, ", ") != w {
			t.Errorf("step %d (%s): cachelab's informer heard %q, want %q", sr.Index, sr.Cmd, got, w)
		}
	}
	if left := tc.leftovers(t); len(left) > 0 {
		t.Errorf("left in the cluster: %v", left)
	}
}

// A namespace that is no longer the run's (its label gone) is left as it
// is, and the run says so.
func TestClusterLeavesWhatIsNotItsOwn(t *testing.T) {
	tc := startTestCluster(t)
	sc, err := scenario.Parse("x.txt", []byte(clusterHead+"create ns0/a\n----\n\nstart\n----\n"))
	if err != nil {
		t.Fatal(err)
	}
	ses, err := Open(context.Background(), sc, Options{Cluster: tc.c})
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range sc.Steps {
		if _, err := ses.Step(st); err != nil {
			t.Fatal(err)
		}
	}
	// Someone relabels it (in etcd: the test cluster serves no PUT of
	// namespaces).
	nsr := tc.dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"})
	ns := ses.r.where.(*clusterWorld).ns.Name()
	kv := tc.world.Etcd.Client()
	got, err := kv.Get(context.Background(), "/registry/namespaces/"+ns)
	if err != nil || len(got.Kvs) != 1 {
		t.Fatalf("the run's namespace in etcd: %v, %v", got, err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(got.Kvs[0].Value); err != nil {
		t.Fatal(err)
	}
	u.SetLabels(map[string]string{"owner": "someone-else"})
	b, _ := u.MarshalJSON()
	if _, err := kv.Put(context.Background(), "/registry/namespaces/"+ns, string(b)); err != nil {
		t.Fatal(err)
	}
	ses.Close()
	if err := ses.LeftBehind(); err == nil || !strings.Contains(err.Error(), "no longer labelled as cachelab's: left as it is") {
		t.Errorf("LeftBehind = %v", err)
	}
	if _, err := nsr.Get(context.Background(), ns, metav1.GetOptions{}); err != nil {
		t.Errorf("the namespace relabelled by someone else: %v (want it still there)", err)
	}
	if err := nsr.Delete(context.Background(), ns, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
}

// The connection levers on a cluster act in the run's proxy between the
// informers' HTTP clients and the cluster. A close-watch ends each side's
// watch response there, cleanly, as the server does at a watch's timeout
// (H7): each client reads the end of its stream. A disconnect cuts the
// TCP connections: each watch ends as its client reads the reset (H6),
// the next requests wait until reconnect, and then go through on new
// connections; a delete made in between reaches the indexer (by a
// relist: the cut watch lasted less than a second of the scenario's
// clock, F4), and cachelab agrees with client-go throughout, with the
// same lines on both sides.
func TestClusterDisconnectCutsTheConnections(t *testing.T) {
	tc := startTestCluster(t)
	sc, err := scenario.Parse("x.txt", []byte(clusterHead+
		"create ns0/a ns0/b\n----\n\nstart\n----\n\nclose-watch\n----\n\ndisconnect\n----\n\ndelete ns0/a\n----\n\nreconnect\n----\n"))
	if err != nil {
		t.Fatal(err)
	}
	res := tc.runAgreeing(t, sc)
	for impl, evs := range res.Steps[2].Sides {
		var ended []string
		for _, e := range evs {
			if e.Layer == "wire" && strings.Contains(e.Detail, " ended: ") {
				ended = append(ended, e.Detail)
			}
		}
		if want := "w1 ended: the run's proxy ended its response, and its client read the end of the stream"; len(ended) != 1 || ended[0] != want {
			t.Errorf("%s: watch ends at close-watch = %q, want %q", impl, ended, want)
		}
	}
	var world []string
	for _, e := range res.Steps[3].World {
		world = append(world, e.Layer+" "+e.Detail)
	}
	if want := "wire the proxy between the informers and the cluster cut 2 TCP connections"; !strings.Contains(strings.Join(world, "\n"), want) {
		t.Errorf("disconnect's world lines:\n%s\nwant one with %q", strings.Join(world, "\n"), want)
	}
	for impl, evs := range res.Steps[3].Sides {
		var ended []string
		for _, e := range evs {
			if e.Layer == "wire" && strings.Contains(e.Detail, "its TCP connection was cut") {
				ended = append(ended, e.Detail)
			}
		}
		if len(ended) != 1 || !strings.HasPrefix(ended[0], "w2 ended:") {
			t.Errorf("%s: watch ends at the cut = %q, want w2's", impl, ended)
		}
	}
	for impl, evs := range res.Steps[5].Sides {
		var through, gone bool
		for _, e := range evs {
			through = through || (e.Layer == "wire" && strings.HasSuffix(e.Detail, " 200 OK"))
			gone = gone || (e.Layer == "indexer" && strings.Contains(e.Detail, "/a@"))
		}
		if !through || !gone {
			for _, e := range evs {
				t.Log(e.Layer, e.Detail)
			}
			t.Errorf("%s: after reconnect, a request through (%v) and a's delete in the indexer (%v), want both", impl, through, gone)
		}
	}
	if left := tc.leftovers(t); len(left) > 0 {
		t.Errorf("left in the cluster: %v", left)
	}
}

// On a cluster, an object's resourceVersion is the run's write that made
// it, or the newest before it and "+"; a point in the cluster's history
// (a LIST's, a bookmark's) is the run's newest write at or before it,
// and "+", so that the run's last write itself and a later revision of
// other components' writes, which two informers listing a moment apart
// are told, name the same point.
func TestClusterNames(t *testing.T) {
	c := &clusterWorld{ownRVs: []int64{10, 20}}
	for _, tc := range []struct {
		rv, object, point string
	}{
		{"5", "0+", "0+"},
		{"10", "10", "10+"},
		{"15", "10+", "10+"},
		{"20", "20", "20+"},
		{"25", "20+", "20+"},
		{"", "", ""},
	} {
		if got := c.rvName(tc.rv); got != tc.object {
			t.Errorf("rvName(%q) = %q, want %q", tc.rv, got, tc.object)
		}
		if got := c.pointName(tc.rv); got != tc.point {
			t.Errorf("pointName(%q) = %q, want %q", tc.rv, got, tc.point)
		}
	}
}

// storeOf is an informer as clusterWorld.reached reads it: its store's
// objects and its last synced resourceVersion.
type storeOf struct {
	informerOps
	objs []any
	rv   string
}

func (s storeOf) indexer() ([]any, string) { return s.objs, s.rv }
func (s storeOf) lastSyncRV() string       { return s.rv }

// A removal on a cluster has settled once the object has left the
// informer's store, not when its resourceVersion has reached the one the
// removal answered with: an update that took the last finalizer answers
// with the object as it was, before the DELETED event that follows it.
func TestClusterRemovalWaitsForTheDelete(t *testing.T) {
	held := &unstructured.Unstructured{}
	held.SetNamespace("ns0")
	held.SetName("held")
	held.SetResourceVersion("23")
	c := &clusterWorld{}
	for _, tt := range []struct {
		objs []any
		want bool
	}{{[]any{held}, false}, {nil, true}} {
		s := &side{inf: storeOf{objs: tt.objs, rv: "23"}, cfg: &startConfig{}, clusterRV: "23", clusterGone: "ns0/held"}
		if got := c.reached(s, 0); got != tt.want {
			t.Errorf("the store holds %d objects: reached %v, want %v", len(tt.objs), got, tt.want)
		}
	}
}
