package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/cachelab/cachelab/listwatch"
)

// A run's writes, through the API: the same calls as listwatch.Writer
// makes on etcd (Get, Create, Update, Delete with preconditions), with
// the same errors (NotFound, AlreadyExists, Conflict), now the server's.
//
// Every write goes to the run's namespace, whatever namespace the object
// names: a scenario's namespace (ns0) is the run's namespace on a
// cluster, and the run checks before its first step that the scenario
// has only one (sim.Check).
//
// A scenario's pod is a bare object: metadata, and an image in
// spec.image if it has one. A cluster validates pods, so each is made a
// valid one on its way there: its image (pause if none) in its one
// container, and the scheduling gate that keeps everything in the
// cluster from acting on it (doc.go).

// gate is the scheduling gate on every pod a run makes.
const gate = "cachelab.dev/not-to-be-scheduled"

// pauseImage is the image of a pod that names none: it is never pulled.
const pauseImage = "registry.k8s.io/pause:3.10"

// Get reads the object.
func (n *Namespace) Get(ctx context.Context, _, name string) (*unstructured.Unstructured, error) {
	return n.pods.Get(ctx, name, metav1.GetOptions{})
}

// Create makes the object in the run's namespace.
func (n *Namespace) Create(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	u, err := n.valid(obj)
	if err != nil {
		return nil, err
	}
	return n.pods.Create(ctx, u, metav1.CreateOptions{})
}

// Update writes the object if it is unchanged since its resourceVersion
// (409 Conflict otherwise), as kube-apiserver's PUT does.
func (n *Namespace) Update(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	u, err := n.valid(obj)
	if err != nil {
		return nil, err
	}
	return n.pods.Update(ctx, u, metav1.UpdateOptions{})
}

// Delete deletes the object and returns it as the server answered: its
// last state, at the deletion's resourceVersion (kube-apiserver's etcd3
// store decodes it there).
func (n *Namespace) Delete(ctx context.Context, _, name string, pre listwatch.Preconditions) (*unstructured.Unstructured, error) {
	opts := metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: pre.UID, ResourceVersion: pre.ResourceVersion}}
	body, err := json.Marshal(opts)
	if err != nil {
		return nil, err
	}
	raw, err := n.rest.Delete().AbsPath("/api/v1/namespaces", n.name, "pods", name).Body(body).
		SetHeader("Content-Type", "application/json").Do(ctx).Raw()
	if err != nil {
		return nil, err
	}
	out := &unstructured.Unstructured{}
	if err := out.UnmarshalJSON(raw); err != nil {
		return nil, fmt.Errorf("the answer to deleting pod %s/%s: %w", n.name, name, err)
	}
	if out.GetKind() != "Pod" {
		// A server may answer with a Status of success instead; the
		// object's last state is then unknown.
		return nil, fmt.Errorf("deleting pod %s/%s: the server answered with a %s, not the pod", n.name, name, out.GetKind())
	}
	return out, nil
}

// ConflictError is the Conflict an Update with a stale resourceVersion
// gets, for a caller that decides a write before making it.
func (n *Namespace) ConflictError(name string) error {
	return apierrors.NewConflict(schema.GroupResource{Resource: "pods"}, name, errors.New(listwatch.OptimisticLockErrorMsg))
}

// valid is obj as a pod a cluster takes, in the run's namespace.
func (n *Namespace) valid(obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	u := obj.DeepCopy()
	u.SetNamespace(n.name)
	image, found, err := unstructured.NestedString(u.Object, "spec", "image")
	if err != nil {
		return nil, fmt.Errorf("pod %s: spec.image: %w", u.GetName(), err)
	}
	if found {
		unstructured.RemoveNestedField(u.Object, "spec", "image")
	}
	containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "containers")
	switch {
	case len(containers) == 0:
		if image == "" {
			image = pauseImage
		}
		containers = []any{map[string]any{"name": "main", "image": image}}
	case found:
		c, ok := containers[0].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("pod %s: spec.containers[0] is not an object", u.GetName())
		}
		c["image"] = image
	}
	if err := unstructured.SetNestedSlice(u.Object, containers, "spec", "containers"); err != nil {
		return nil, err
	}
	if _, ok, _ := unstructured.NestedSlice(u.Object, "spec", "schedulingGates"); !ok && u.GetResourceVersion() == "" {
		// Gates can only be removed after a pod is made, never added.
		if err := unstructured.SetNestedSlice(u.Object, []any{map[string]any{"name": gate}}, "spec", "schedulingGates"); err != nil {
			return nil, err
		}
	}
	return u, nil
}

// ListAt lists the run's pods that opts select as they were at
// resourceVersion rv exactly (resourceVersionMatch=Exact): what the
// run's checks hold an informer's cache against. A cluster answers for
// as far back as its etcd keeps history (5 minutes by default), and
// with 410 Gone further back.
func (n *Namespace) ListAt(ctx context.Context, opts metav1.ListOptions, rv string) ([]unstructured.Unstructured, error) {
	opts.ResourceVersion, opts.ResourceVersionMatch = rv, metav1.ResourceVersionMatchExact
	var out []unstructured.Unstructured
	for {
		l, err := n.pods.List(ctx, opts)
		if err != nil {
			return nil, err
		}
		out = append(out, l.Items...)
		if l.GetContinue() == "" {
			return out, nil
		}
		opts.Continue, opts.ResourceVersion, opts.ResourceVersionMatch = l.GetContinue(), "", ""
	}
}
