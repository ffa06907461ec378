package kubeapiserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/cachelab/cachelab/internal/apiworld"
)

var (
	podsGVR       = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	namespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

// clients are client-go's clients for one user of a world's server.
type clients struct {
	disc *discovery.DiscoveryClient
	dyn  *dynamic.DynamicClient
	rest rest.Interface // for a DELETE's answer, which the dynamic client drops
}

// clientsFor makes user's clients, over one transport closed when the
// test ends.
func clientsFor(t *testing.T, wd *apiworld.World, user string) clients {
	t.Helper()
	cfg, hc := wd.HTTPClient(t, user)
	var c clients
	var err error
	if c.disc, err = discovery.NewDiscoveryClientForConfigAndClient(cfg, hc); err != nil {
		t.Fatal(err)
	}
	if c.dyn, err = dynamic.NewForConfigAndClient(cfg, hc); err != nil {
		t.Fatal(err)
	}
	if c.rest, err = rest.UnversionedRESTClientForConfigAndClient(dynamic.ConfigFor(cfg), hc); err != nil {
		t.Fatal(err)
	}
	return c
}

// A client holding a kubeconfig makes a namespace, writes a pod in it
// through its life (create, update, delete), and deletes the namespace,
// as kubectl would: every request goes through k8s.io/apiserver's REST
// handlers and generic registry to the etcd3 store, and is answered as
// kube-apiserver answers it.
func TestClientGoWritesPodsAndNamespaces(t *testing.T) {
	for _, cache := range []bool{true, false} {
		t.Run("cache="+strconv.FormatBool(cache), func(t *testing.T) {
			wd := apiworld.StartWritable(t, cache)
			c := clientsFor(t, wd, "kubectl")
			ctx := context.Background()
			discoveryListsWrites(t, c)

			nss := c.dyn.Resource(namespacesGVR)
			if _, err := nss.Create(ctx, apiworld.Namespace("ns0"), metav1.CreateOptions{}); err != nil {
				t.Fatalf("creating namespace ns0: %v", err)
			}
			nsList, err := nss.List(ctx, metav1.ListOptions{})
			if err != nil || len(nsList.Items) != 1 || nsList.Items[0].GetName() != "ns0" || nsList.Items[0].GetNamespace() != "" {
				t.Fatalf("LIST of namespaces: %v, %v; want ns0 alone, in no namespace", nsList, err)
			}
			nsWatch, err := nss.Watch(ctx, metav1.ListOptions{ResourceVersion: nsList.GetResourceVersion()})
			if err != nil {
				t.Fatal(err)
			}
			defer nsWatch.Stop()
			podThroughItsLife(t, c)

			// NamespaceLifecycle admission: no create in a namespace that
			// does not exist.
			_, err = c.dyn.Resource(podsGVR).Namespace("nope").Create(ctx, apiworld.Pod("", "b", nil), metav1.CreateOptions{})
			if !apierrors.IsNotFound(err) || code(err) != http.StatusNotFound || err.Error() != `namespaces "nope" not found` {
				t.Errorf("creating a pod in a namespace that does not exist: %v; want 404 namespaces \"nope\" not found", err)
			}

			// A namespace is deleted at once: there is no namespace
			// controller to empty it first.
			if err := nss.Delete(ctx, "ns0", metav1.DeleteOptions{}); err != nil {
				t.Fatalf("deleting namespace ns0: %v", err)
			}
			if _, err := nss.Get(ctx, "ns0", metav1.GetOptions{}); !apierrors.IsNotFound(err) || code(err) != http.StatusNotFound {
				t.Errorf("GET of the deleted namespace: %v; want 404", err)
			}
			wantType(t, nsWatch, watch.Deleted, "ns0")
		})
	}
}

// podThroughItsLife creates pod a in namespace ns0, reads it, updates
// it, tries a stale update, and deletes it, checking each answer and
// what a watcher sees.
func podThroughItsLife(t *testing.T, c clients) {
	t.Helper()
	ctx := context.Background()
	pods := c.dyn.Resource(podsGVR).Namespace("ns0")
	made, err := pods.Create(ctx, apiworld.Pod("", "a", map[string]string{"app": "x"}), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating pod ns0/a: %v", err)
	}
	if made.GetNamespace() != "ns0" || made.GetUID() == "" || made.GetCreationTimestamp().Time.IsZero() {
		t.Errorf("the created pod: namespace %q, uid %q, creationTimestamp %v; want ns0 and both set",
			made.GetNamespace(), made.GetUID(), made.GetCreationTimestamp())
	}
	w, err := pods.Watch(ctx, metav1.ListOptions{ResourceVersion: made.GetResourceVersion()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	got, err := pods.Get(ctx, "a", metav1.GetOptions{})
	if err != nil || got.GetResourceVersion() != made.GetResourceVersion() {
		t.Fatalf("GET ns0/a: %v, %v; want resourceVersion %s", got, err, made.GetResourceVersion())
	}

	got.SetLabels(map[string]string{"app": "y"})
	updated, err := pods.Update(ctx, got, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("updating ns0/a: %v", err)
	}
	if updated.GetLabels()["app"] != "y" || rv(t, updated) <= rv(t, made) || updated.GetUID() != made.GetUID() {
		t.Errorf("the updated pod: labels %v, resourceVersion %s (was %s), uid %s; want app=y, a later one, the same uid",
			updated.GetLabels(), updated.GetResourceVersion(), made.GetResourceVersion(), updated.GetUID())
	}
	// kube-apiserver: an update at a resourceVersion that is no
	// longer the object's is 409 Conflict (registry store.go Update).
	_, err = pods.Update(ctx, got, metav1.UpdateOptions{})
	if !apierrors.IsConflict(err) || code(err) != http.StatusConflict {
		t.Errorf("an update at stale resourceVersion %s: %v; want 409 Conflict", got.GetResourceVersion(), err)
	}

	deleted := deletePod(t, c, "ns0", "a", updated.GetResourceVersion())
	if deleted.GetName() != "a" || rv(t, deleted) <= rv(t, updated) {
		t.Errorf("DELETE answered %s at resourceVersion %s; want pod a at one after %s",
			deleted.GetName(), deleted.GetResourceVersion(), updated.GetResourceVersion())
	}
	// A watcher sees the update, then the delete at the resourceVersion
	// the DELETE answered with.
	wantEvents(t, w, []string{"MODIFIED " + updated.GetResourceVersion(), "DELETED " + deleted.GetResourceVersion()})
	if _, err := pods.Get(ctx, "a", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("GET of the deleted pod: %v; want 404", err)
	}
}

// discoveryListsWrites checks that /api/v1 lists pods and namespaces
// with the verbs the server takes for each, sorted as kube-apiserver
// sorts them.
func discoveryListsWrites(t *testing.T, c clients) {
	t.Helper()
	rl, err := c.disc.ServerResourcesForGroupVersion("v1")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"pods":       "true create,delete,get,list,update,watch",
		"namespaces": "false create,delete,get,list,watch",
	}
	for _, r := range rl.APIResources {
		got := strconv.FormatBool(r.Namespaced) + " " + strings.Join(r.Verbs, ",")
		if got != want[r.Name] {
			t.Errorf("discovery of v1: %s is %q; want %q", r.Name, got, want[r.Name])
		}
		delete(want, r.Name)
	}
	if len(want) > 0 {
		t.Errorf("discovery of v1 does not list %v", want)
	}
}

// deletePod deletes a pod at resourceVersion rv (a precondition) and
// returns the server's answer, which must be the pod.
func deletePod(t *testing.T, c clients, ns, name, rv string) *unstructured.Unstructured {
	t.Helper()
	body, err := json.Marshal(metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &rv}})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := c.rest.Delete().AbsPath("/api/v1/namespaces", ns, "pods", name).Body(body).Do(context.Background()).Raw()
	if err != nil {
		t.Fatalf("deleting pod %s/%s: %v", ns, name, err)
	}
	out := &unstructured.Unstructured{}
	if err := out.UnmarshalJSON(raw); err != nil || out.GetKind() != "Pod" {
		t.Fatalf("the answer to deleting pod %s/%s: %v, %s; want the pod", ns, name, err, raw)
	}
	return out
}

// wantEvents reads len(want) events from w, each as "TYPE resourceVersion",
// waiting at most 10 s for each.
func wantEvents(t *testing.T, w watch.Interface, want []string) {
	t.Helper()
	var got []string
	for range want {
		select {
		case e, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("the watch ended after %v; want %v", got, want)
			}
			u, _ := e.Object.(*unstructured.Unstructured)
			got = append(got, string(e.Type)+" "+u.GetResourceVersion())
		case <-time.After(10 * time.Second):
			t.Fatalf("the watch had %v after 10 s; want %v", got, want)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("the watch: %v; want %v", got, want)
	}
}

// wantType reads one event from w, waiting at most 10 s, and checks its
// type and its object's name.
func wantType(t *testing.T, w watch.Interface, typ watch.EventType, name string) {
	t.Helper()
	select {
	case e, ok := <-w.ResultChan():
		u, _ := e.Object.(*unstructured.Unstructured)
		if !ok || e.Type != typ || u.GetName() != name {
			t.Errorf("the watch: %s %v (open: %v); want %s %s", e.Type, e.Object, ok, typ, name)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the watch had nothing after 10 s; want %s %s", typ, name)
	}
}

// A namespace named by generateName gets a name the server picks, as a
// run on a cluster makes its own. An update of a namespace is not served.
func TestNamespaceGenerateName(t *testing.T) {
	wd := apiworld.StartWritable(t, false)
	c := clientsFor(t, wd, "kubectl")
	ns := apiworld.Namespace("")
	ns.SetGenerateName("run-")
	made, err := c.dyn.Resource(namespacesGVR).Create(context.Background(), ns, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if name := made.GetName(); !strings.HasPrefix(name, "run-") || len(name) != len("run-")+5 {
		t.Errorf("the generated name: %q; want run- and 5 characters", name)
	}
	if _, err := c.dyn.Resource(namespacesGVR).Update(context.Background(), made, metav1.UpdateOptions{}); !apierrors.IsMethodNotSupported(err) {
		t.Errorf("an update of a namespace: %v; want 405 MethodNotSupported", err)
	}
}

// Without Options.Writes the server serves reads only: a create is 405,
// discovery lists get, list and watch, and namespaces are not served.
func TestReadOnlyRefusesWrites(t *testing.T) {
	wd := apiworld.Start(t, false)
	c := clientsFor(t, wd, "kubectl")
	_, err := c.dyn.Resource(podsGVR).Namespace("ns0").Create(context.Background(), apiworld.Pod("", "a", nil), metav1.CreateOptions{})
	if !apierrors.IsMethodNotSupported(err) || code(err) != http.StatusMethodNotAllowed {
		t.Errorf("a create on a read-only server: %v; want 405 MethodNotSupported", err)
	}
	rl, err := c.disc.ServerResourcesForGroupVersion("v1")
	if err != nil {
		t.Fatal(err)
	}
	if len(rl.APIResources) != 1 || rl.APIResources[0].Name != "pods" || !slices.Equal(rl.APIResources[0].Verbs, []string{"get", "list", "watch"}) {
		t.Errorf("discovery of v1: %+v; want pods alone, with get, list, watch", rl.APIResources)
	}
}

// Writes the server refuses, each as kube-apiserver refuses it.
func TestWritesRefused(t *testing.T) {
	wd := apiworld.StartWritable(t, false)
	c := clientsFor(t, wd, "kubectl")
	ctx := context.Background()
	if _, err := c.dyn.Resource(namespacesGVR).Create(ctx, apiworld.Namespace("ns0"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a"}}`
	for _, tc := range []struct {
		name, method, path, body string
		want                     int32
	}{
		{"an object of another kind", "POST", "/api/v1/namespaces/ns0/pods", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"a"}}`, http.StatusBadRequest},
		{"a pod of another namespace", "POST", "/api/v1/namespaces/ns0/pods", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","namespace":"ns1"}}`, http.StatusBadRequest},
		{"a pod without a name", "POST", "/api/v1/namespaces/ns0/pods", `{"apiVersion":"v1","kind":"Pod","metadata":{}}`, http.StatusUnprocessableEntity},
		{"a create in all namespaces", "POST", "/api/v1/pods", pod, http.StatusMethodNotAllowed},
		{"a delete in all namespaces", "DELETE", "/api/v1/pods/a", "", http.StatusMethodNotAllowed},
		{"an update of a pod that does not exist", "PUT", "/api/v1/namespaces/ns0/pods/a", pod, http.StatusNotFound},
		{"a patch", "PATCH", "/api/v1/namespaces/ns0/pods/a", `{}`, http.StatusMethodNotAllowed},
		{"a delete of a collection", "DELETE", "/api/v1/namespaces/ns0/pods", "", http.StatusMethodNotAllowed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			contentType := "application/json"
			if tc.method == "PATCH" {
				contentType = "application/merge-patch+json"
			}
			req := c.rest.Verb(tc.method).AbsPath(tc.path).SetHeader("Content-Type", contentType)
			if tc.body != "" {
				req = req.Body([]byte(tc.body))
			}
			err := req.Do(ctx).Error()
			if code(err) != tc.want {
				t.Errorf("%s %s: %v (%d); want %d", tc.method, tc.path, err, code(err), tc.want)
			}
		})
	}
	if list, err := c.dyn.Resource(podsGVR).List(ctx, metav1.ListOptions{}); err != nil || len(list.Items) != 0 {
		t.Errorf("the pods after the refused writes: %v, %v; want none", list, err)
	}
}

// A namespace's write moves etcd's revision on past the pods' watch
// cache, which hears of it only from a progress notification (Settle asks
// for one). Then a consistent LIST of pods is served from the cache, at
// that revision.
func TestConsistentListAfterANamespaceWrite(t *testing.T) {
	wd := apiworld.StartWritable(t, true)
	c := clientsFor(t, wd, "kubectl")
	ctx := context.Background()
	ns, err := c.dyn.Resource(namespacesGVR).Create(ctx, apiworld.Namespace("ns0"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wd.Settle(t)
	list, err := c.dyn.Resource(podsGVR).List(ctx, metav1.ListOptions{})
	if err != nil || list.GetResourceVersion() != ns.GetResourceVersion() {
		t.Fatalf("a consistent LIST of pods: %v, %v; want it at the namespace's resourceVersion %s", list, err, ns.GetResourceVersion())
	}
	if last, _ := wd.Server.LastList("kubectl"); last.From.Etcd {
		t.Errorf("the LIST was answered from %s; want the cache", &last.From)
	}
}

// rv is an object's resourceVersion as a number.
func rv(t *testing.T, u *unstructured.Unstructured) int64 {
	t.Helper()
	n, err := strconv.ParseInt(u.GetResourceVersion(), 10, 64)
	if err != nil {
		t.Fatalf("%s's resourceVersion %q: %v", u.GetName(), u.GetResourceVersion(), err)
	}
	return n
}

// code is an API error's HTTP status, 0 for any other error.
func code(err error) int32 {
	if s, ok := err.(apierrors.APIStatus); ok {
		return s.Status().Code
	}
	return 0
}

// Writes of one resource at once, as clients of a real cluster make them
// (the tests' runs side by side in the cluster world): each goes through
// a write handler of its own, as kube-apiserver's installer makes one per
// request. Made once and shared, k8s.io/apiserver's handlers raced on the
// admission chain each request wraps and stores back, which -race
// reports, and the chain grew by a wrapper at every write.
func TestWritesAtOnceEachHaveTheirOwnHandler(t *testing.T) {
	wd := apiworld.StartWritable(t, true)
	c := clientsFor(t, wd, "kubectl")
	ctx := context.Background()
	if _, err := c.dyn.Resource(namespacesGVR).Create(ctx, apiworld.Namespace("ns0"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pods := c.dyn.Resource(podsGVR).Namespace("ns0")
	errs := make(chan error, 8)
	for i := range 8 {
		go func() {
			name := "p" + strconv.Itoa(i)
			made, err := pods.Create(ctx, apiworld.Pod("", name, nil), metav1.CreateOptions{})
			if err == nil {
				made.SetLabels(map[string]string{"v": "2"})
				_, err = pods.Update(ctx, made, metav1.UpdateOptions{})
			}
			if err == nil {
				err = pods.Delete(ctx, name, metav1.DeleteOptions{})
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
