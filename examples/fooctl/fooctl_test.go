package fooctl_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/klog/v2"

	"github.com/cachelab/cachelab/controllertest"
	"github.com/cachelab/cachelab/examples/fooctl"
)

func TestMain(m *testing.M) {
	klog.SetLogger(logr.Discard()) // kube-apiserver's and client-go's logs, one world per placement
	os.Exit(m.Run())
}

// explore explores the story with the operator reconciling with
// reconcile (and, for Mistaken, its cleanup on delete).
func explore(t *testing.T, mistaken bool) *controllertest.Report {
	t.Helper()
	src, err := os.ReadFile("testdata/story.txt")
	if err != nil {
		t.Fatal(err)
	}
	story, err := controllertest.ParseStory("testdata/story.txt", src)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := controllertest.Explore{
		Story:      story,
		World:      controllertest.Options{Resources: []string{"configmaps", "deployments"}},
		Controller: func(ctx context.Context, w *controllertest.World) error { return run(ctx, w, mistaken) },
		Namespaces: []string{fooctl.Registry},
		Unowned:    []string{fooctl.Registry},
		Invariants: []controllertest.Invariant{{Name: "registered", Check: registered}, {Name: "colored", Check: colored}},
		Jobs:       4,
	}.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func run(ctx context.Context, w *controllertest.World, mistaken bool) error {
	opts := fooctl.Options{Config: w.Config(), Clock: w.Clock(), Metrics: w.QueueMetrics(), Reconcile: fooctl.Fixed}
	if mistaken {
		opts.Reconcile = fooctl.Mistaken
	}
	c, err := fooctl.New(opts)
	if err != nil {
		return err
	}
	if mistaken {
		if err := c.OnFooDelete(fooctl.MistakenCleanup(c)); err != nil {
			return err
		}
	}
	return c.Run(ctx)
}

// registered: the registry holds a registration for each Foo that
// exists, and for no other.
func registered(e *controllertest.End) error {
	want := map[string]bool{}
	for _, f := range e.Objects["foos"] {
		want[f.GetNamespace()+"."+f.GetName()] = true
	}
	for _, cm := range e.Objects["configmaps"] {
		if cm.GetNamespace() != fooctl.Registry {
			continue
		}
		if !want[cm.GetName()] {
			return fmt.Errorf("registration %s is for a Foo that does not exist", cm.GetName())
		}
		delete(want, cm.GetName())
	}
	for name := range want {
		return fmt.Errorf("Foo %s is not registered", name)
	}
	return nil
}

// colored: each Foo's ConfigMap says its color.
func colored(e *controllertest.End) error {
	cms := map[string]unstructured.Unstructured{}
	for _, cm := range e.Objects["configmaps"] {
		cms[cm.GetNamespace()+"/"+cm.GetName()] = cm
	}
	for _, f := range e.Objects["foos"] {
		color, _, _ := unstructured.NestedString(f.Object, "spec", "color")
		cm, ok := cms[f.GetNamespace()+"/"+f.GetName()+"-config"]
		got, _, _ := unstructured.NestedString(cm.Object, "data", "color")
		if !ok || got != color {
			return fmt.Errorf("Foo %s/%s is %s; its ConfigMap says %q", f.GetNamespace(), f.GetName(), color, got)
		}
	}
	return nil
}

func TestFixedKeepsEveryInvariant(t *testing.T) {
	rep := explore(t, false)
	t.Logf("%s", rep)
	if rep.Failed() {
		t.Errorf("the fixed operator:\n%s", rep)
	}
}

func TestMistakesAreFound(t *testing.T) {
	rep := explore(t, true)
	t.Logf("%s", rep)
	var verdicts []string
	for _, g := range rep.Groups {
		verdicts = append(verdicts, g.Verdict)
	}
	all := strings.Join(verdicts, "\n")
	for _, want := range []string{"no-duplicates", "registered"} {
		if !strings.Contains(all, want) {
			t.Errorf("no placement broke %s; the verdicts:\n%s", want, all)
		}
	}
}
