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
