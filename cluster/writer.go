package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/cachelab/cachelab/listwatch"
)

// A run's writes, through the API: the same calls as listwatch.Writer
// makes on etcd (Get, Create, Update, Delete with preconditions), with
// the same errors (NotFound, AlreadyExists, Conflict), now the server's.
// A run writes pods, configmaps and secrets (Kept): objects of the core
// group that nothing in a cluster acts on, once a pod cannot be
// scheduled. A Deployment or a ReplicaSet would be: the cluster's
// controllers would make pods of it, outside the scenario.
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

// Kept are the resources a run can write on a cluster.
var Kept = []listwatch.Resource{listwatch.Pods, listwatch.ConfigMaps, listwatch.Secrets}

// Objects are the run's objects of one resource in its namespace: where
// its writes of that resource go.
type Objects struct {
	n   *Namespace
	res listwatch.Resource
	api dynamic.ResourceInterface
}

// Of is the run's objects of res, one of Kept.
func (n *Namespace) Of(res listwatch.Resource) (*Objects, error) {
	for _, k := range Kept {
		if k == res {
			if o := n.objects[res.Resource]; o != nil {
				return o, nil
			}
			o := &Objects{n: n, res: res, api: n.c.dyn.Resource(res.GroupVersionResource()).Namespace(n.name)}
			n.objects[res.Resource] = o
			return o, nil
		}
	}
	return nil, fmt.Errorf("a run on a cluster writes %s, not %s: the cluster's controllers would act on it, outside the run", kept(), res.Resource)
}

// kept names Kept, for messages.
func kept() string {
	var names []string
	for _, k := range Kept {
		names = append(names, k.Resource)
	}
	return strings.Join(names, ", ")
}

// Get reads the object.
func (o *Objects) Get(ctx context.Context, _, name string) (*unstructured.Unstructured, error) {
	return o.api.Get(ctx, name, metav1.GetOptions{})
}

// Create makes the object in the run's namespace.
func (o *Objects) Create(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	u, err := o.valid(obj)
	if err != nil {
		return nil, err
	}
	return o.api.Create(ctx, u, metav1.CreateOptions{})
}

// Update writes the object if it is unchanged since its resourceVersion
// (409 Conflict otherwise), as kube-apiserver's PUT does.
func (o *Objects) Update(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	u, err := o.valid(obj)
	if err != nil {
		return nil, err
	}
	return o.api.Update(ctx, u, metav1.UpdateOptions{})
}

// Delete deletes the object and returns it as the server answered: its
// last state, at the deletion's resourceVersion (kube-apiserver's etcd3
// store decodes it there).
func (o *Objects) Delete(ctx context.Context, _, name string, pre listwatch.Preconditions) (*unstructured.Unstructured, error) {
	n, what := o.n, o.res.Kind
	opts := metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: pre.UID, ResourceVersion: pre.ResourceVersion}}
	body, err := json.Marshal(opts)
	if err != nil {
		return nil, err
	}
	raw, err := n.rest.Delete().AbsPath("/api/v1/namespaces", n.name, o.res.Resource, name).Body(body).
		SetHeader("Content-Type", "application/json").Do(ctx).Raw()
	if err != nil {
		return nil, err
	}
	out := &unstructured.Unstructured{}
	if err := out.UnmarshalJSON(raw); err != nil {
		return nil, fmt.Errorf("the answer to deleting %s %s/%s: %w", what, n.name, name, err)
	}
	if out.GetKind() != what {
		// A server may answer with a Status of success instead; the
		// object's last state is then unknown.
		return nil, fmt.Errorf("deleting %s %s/%s: the server answered with a %s, not the %s", what, n.name, name, out.GetKind(), what)
	}
	return out, nil
}

// ConflictError is the Conflict an Update with a stale resourceVersion
// gets, for a caller that decides a write before making it.
func (o *Objects) ConflictError(name string) error {
	return apierrors.NewConflict(o.res.GroupResource(), name, errors.New(listwatch.OptimisticLockErrorMsg))
}

// valid is obj as the cluster takes it, in the run's namespace: a pod
// made a valid one (see above), anything else as it is.
func (o *Objects) valid(obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	u := obj.DeepCopy()
	u.SetNamespace(o.n.name)
	if o.res != listwatch.Pods {
		return u, nil
	}
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

// ListAt lists the run's objects that opts select as they were at
// resourceVersion rv exactly (resourceVersionMatch=Exact): what the
// run's checks hold an informer's cache against. A cluster answers for
// as far back as its etcd keeps history (5 minutes by default), and
// with 410 Gone further back.
func (o *Objects) ListAt(ctx context.Context, opts metav1.ListOptions, rv string) ([]unstructured.Unstructured, error) {
	opts.ResourceVersion, opts.ResourceVersionMatch = rv, metav1.ResourceVersionMatchExact
	var out []unstructured.Unstructured
	for {
		l, err := o.api.List(ctx, opts)
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
