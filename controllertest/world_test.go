package controllertest

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"

	"github.com/cachelab/cachelab/examples/fooctl"
)

const parentStory = `# A parent configmap, changed, then deleted.
create configmaps ns0/p labels=(role=parent)
----

update configmaps ns0/p data=(k=v)
----

delete configmaps ns0/p
----
`

// A settle returns once the controller has done what the step led it to:
// after the create its child is there, with no wait of the test's own;
// after the delete the garbage collector has taken the child away.
func TestSettleWaitsForTheController(t *testing.T) {
	ctx := context.Background()
	s := story(t, parentStory)
	w := start(t, Options{Resources: []string{"configmaps"}})
	if err := w.Prepare(ctx, s); err != nil {
		t.Fatal(err)
	}
	w.Run(func(ctx context.Context) error { return childMaker(ctx, w) })
	if err := w.SettleAndCollect(ctx); err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"ns0/p", "ns0/p-child"}, {"ns0/p", "ns0/p-child"}, nil}
	for i := range s.sc.Steps {
		st := &s.sc.Steps[i]
		if err := w.Do(ctx, s, st, st.Text); err != nil {
			t.Fatal(err)
		}
		objs, err := w.Objects(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want[i], names(objs["configmaps"])); diff != "" {
			t.Errorf("after %q, the configmaps (-want +got):\n%s", st.Text, diff)
		}
	}
}

// A story is the scenario language's writes, clock and faults; the rest
// of it (the simulator's own informers) is refused at its line, and so
// is a resource the world does not serve.
func TestStoryRefusals(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"# x\nadd-handler h\n----\n", `story.txt:2: a controller's world does not play "add-handler"`},
		{"# x\nstart informer=pods\n----\n", "story.txt:2: start takes nothing in a controller's world"},
		{"# x\ncreate configmaps ns0/a\n----\n\ndisconnect after-events=1\n----\n", "story.txt:5: a fault inside a step"},
		{"# x\ncreate nodes ns0/a\n----\n", "story.txt:2"},
	} {
		_, err := ParseStory("story.txt", []byte(tc.src))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseStory(%q) = %v; want an error with %q", tc.src, err, tc.want)
		}
	}
	w := start(t, Options{Resources: []string{"configmaps"}})
	err := w.Prepare(context.Background(), story(t, "# x\ncreate secrets ns0/s\n----\n"))
	if err == nil || !strings.Contains(err.Error(), "story.txt:2: the world does not serve secrets; it serves configmaps") {
		t.Errorf("Prepare of a story that writes secrets in a world of configmaps = %v", err)
	}
}

// A custom resource's writes through the server are kube-apiserver's:
// pruned of fields its schema does not know, defaulted, given a
// generation, and refused when they break the schema (E20).
func TestCustomResourceWrites(t *testing.T) {
	ctx := context.Background()
	w := start(t, Options{Resources: []string{"configmaps"}, CRDs: []string{fooctl.CRD}})
	if err := w.Prepare(ctx, story(t, "# x\ncreate configmaps ns0/a\n----\n")); err != nil {
		t.Fatal(err)
	}
	foos := w.Client().Resource(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "foos"}).Namespace("ns0")
	f := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Foo",
		"metadata": map[string]any{"name": "f"}, "spec": map[string]any{"colour": "blue"}}}
	got, err := foos.Create(ctx, f, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"replicas": int64(1)}, got.Object["spec"]); diff != "" {
		t.Errorf("the stored spec, pruned and defaulted (-want +got):\n%s", diff)
	}
	if got.GetGeneration() != 1 {
		t.Errorf("generation = %d, want 1", got.GetGeneration())
	}
	bad := f.DeepCopy()
	bad.SetName("g")
	bad.Object["spec"] = map[string]any{"replicas": "two"}
	if _, err := foos.Create(ctx, bad, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("a Foo whose replicas is a string: %v, want 422 Invalid", err)
	}
}

// Config reaches the world's server over its network, and nothing else:
// a client that ignores its Dial dials a name no resolver answers, not
// a port of this machine where another kube-apiserver may listen.
func TestConfigReachesOnlyTheWorld(t *testing.T) {
	w := start(t, Options{Resources: []string{"configmaps"}})
	cfg := w.Config()
	if _, err := w.Client().Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).List(context.Background(), metav1.ListOptions{}); err != nil {
		t.Fatalf("a client of Config: %v", err)
	}
	if !strings.HasSuffix(cfg.Host, ".invalid") {
		t.Errorf("Config().Host = %q, want a name under .invalid", cfg.Host)
	}
}

// statusCRD is a custom resource with the status subresource, as
// kubernetes/sample-controller's Foo has it.
const statusCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: bars.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: bars, singular: bar, kind: Bar}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              replicas: {type: integer, minimum: 1}
          status:
            type: object
            properties:
              ready: {type: integer, minimum: 0}
`

// With the status subresource, as kube-apiserver serves it
// (apiextensions-apiserver's strategies, package crd): a create drops the
// status it is sent, an update of the object keeps the stored status, an
// update of /status changes only the status and not the generation, and
// validates it; discovery lists bars/status (REFERENCE.md E21).
func TestStatusSubresource(t *testing.T) {
	ctx := context.Background()
	w := start(t, Options{Resources: []string{"configmaps"}, CRDs: []string{statusCRD}})
	if err := w.Prepare(ctx, story(t, "# x\ncreate configmaps ns0/a\n----\n")); err != nil {
		t.Fatal(err)
	}
	bars := w.Client().Resource(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "bars"}).Namespace("ns0")
	b := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Bar",
		"metadata": map[string]any{"name": "b"}, "spec": map[string]any{"replicas": int64(2)}, "status": map[string]any{"ready": int64(9)}}}
	created, err := bars.Create(ctx, b, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := created.Object["status"]; ok || created.GetGeneration() != 1 {
		t.Errorf("created: status %v, generation %d; want no status (a create drops it), generation 1", created.Object["status"], created.GetGeneration())
	}

	withStatus := created.DeepCopy()
	withStatus.Object["status"] = map[string]any{"ready": int64(2)}
	withStatus.Object["spec"] = map[string]any{"replicas": int64(5)} // not taken by /status
	updated, err := bars.UpdateStatus(ctx, withStatus, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"spec": map[string]any{"replicas": int64(2)}, "status": map[string]any{"ready": int64(2)}, "generation": int64(1)},
		map[string]any{"spec": updated.Object["spec"], "status": updated.Object["status"], "generation": updated.GetGeneration()}); diff != "" {
		t.Errorf("after PUT /status (-want +got):\n%s", diff)
	}

	spec := updated.DeepCopy()
	spec.Object["spec"] = map[string]any{"replicas": int64(3)}
	spec.Object["status"] = map[string]any{"ready": int64(7)} // not taken by the object's PUT
	updated, err = bars.Update(ctx, spec, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"spec": map[string]any{"replicas": int64(3)}, "status": map[string]any{"ready": int64(2)}, "generation": int64(2)},
		map[string]any{"spec": updated.Object["spec"], "status": updated.Object["status"], "generation": updated.GetGeneration()}); diff != "" {
		t.Errorf("after PUT of the object (-want +got):\n%s", diff)
	}

	bad := updated.DeepCopy()
	bad.Object["status"] = map[string]any{"ready": int64(-1)}
	if _, err := bars.UpdateStatus(ctx, bad, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("PUT /status with ready -1: %v, want 422 Invalid (the status schema's minimum)", err)
	}
	stale := created.DeepCopy() // its resourceVersion is two writes old
	stale.Object["status"] = map[string]any{"ready": int64(1)}
	if _, err := bars.UpdateStatus(ctx, stale, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Errorf("PUT /status at a stale resourceVersion: %v, want 409 Conflict", err)
	}
	got, err := bars.Get(ctx, "b", metav1.GetOptions{}, "status")
	if err != nil || got.Object["status"] == nil {
		t.Errorf("GET /status: %v, %v; want the object", got, err)
	}
	if _, err := bars.Get(ctx, "b", metav1.GetOptions{}, "scale"); !apierrors.IsNotFound(err) {
		t.Errorf("GET /scale: %v, want 404 (no scale subresource)", err)
	}

	disc, err := discovery.NewDiscoveryClientForConfig(w.Config())
	if err != nil {
		t.Fatal(err)
	}
	list, err := disc.ServerResourcesForGroupVersion("example.com/v1")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range list.APIResources {
		names = append(names, r.Name+" "+strings.Join(r.Verbs, ","))
	}
	if diff := cmp.Diff([]string{"bars create,delete,get,list,update,watch", "bars/status get,update"}, names); diff != "" {
		t.Errorf("discovery (-want +got):\n%s", diff)
	}
}

// A story with a stop and a start (a stop placement's file) prepares in a
// world that serves no pods: start names no resource in a controller's
// world, though the scenario language gives it pods by default.
func TestPrepareStopStart(t *testing.T) {
	w := start(t, Options{Resources: []string{"configmaps"}})
	src := "# x\ncreate configmaps ns0/a\n----\n\nstop\n----\n\nstart\n----\n"
	if err := w.Prepare(context.Background(), story(t, src)); err != nil {
		t.Errorf("Prepare: %v, want nil", err)
	}
	bad := "# x\ncreate pods ns0/a\n----\n"
	if err := w.Prepare(context.Background(), story(t, bad)); err == nil || !strings.Contains(err.Error(), "does not serve pods") {
		t.Errorf("Prepare of a story that creates a pod: %v, want a refusal", err)
	}
}
