package sim

import (
	"fmt"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/cachelab/cachelab/listwatch"
	"github.com/cachelab/cachelab/sim/objects"
	"github.com/cachelab/cachelab/sim/scenario"
	"github.com/cachelab/cachelab/sim/trace"
)

// The world's objects: what a step's create, update and delete make of
// an object of the resource it names (pods unless it names another), and
// how the trace says what etcd then holds. Where the write goes is the
// world's (runWorld.writer); what follows it (which informers see it) is
// wrote's (actions.go).

func (r *runner) newPod(key string) (*unstructured.Unstructured, error) {
	ns, name, ok := strings.Cut(key, "/")
	if !ok || ns == "" || name == "" {
		return nil, fmt.Errorf("object %q: want namespace/name", key)
	}
	u := examplePod()
	u.SetNamespace(ns)
	u.SetName(name)
	return u, nil
}

// newObject is a new object of the resource a scenario names, under key,
// with what the step gives its fields (package objects).
func (r *runner) newObject(resource, key string, ch objects.Change) (*unstructured.Unstructured, error) {
	if c, ok := r.custom(resource); ok {
		return objects.New(r.resourceOf(resource), &c, key, ch)
	}
	return objects.New(r.resourceNamed(resource), nil, key, ch)
}

// ref is how the trace names an object of resource: its description
// alone for a pod, else the resource first.
func ref(resource string, obj any) string { return scenario.ObjectRef(resource, trace.Describe(obj)) }

// refLong is ref with trace.DescribeLong.
func refLong(resource string, obj any) string {
	return scenario.ObjectRef(resource, trace.DescribeLong(obj))
}

// setOwner makes the object ownerKey of ownerRes u's controller owner:
// an ownerReference as a controller writes one, with the owner's uid as
// it was last created (E19).
func (r *runner) setOwner(u *unstructured.Unstructured, ownerRes, ownerKey string) error {
	uid, ok := r.uidOf[scenario.ObjectRef(ownerRes, ownerKey)]
	if !ok {
		return fmt.Errorf("owner %s %s: not created by this run", ownerRes, ownerKey)
	}
	res := r.resourceNamed(ownerRes)
	_, name, _ := strings.Cut(ownerKey, "/")
	yes := true
	u.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: res.APIVersion(), Kind: res.Kind, Name: name,
		UID: types.UID(uid), Controller: &yes, BlockOwnerDeletion: &yes}})
	return nil
}

func (r *runner) create(resource, key string, ch objects.Change, ownerRes, ownerKey string, managed bool) error {
	var u *unstructured.Unstructured
	var err error
	if resource == scenario.DefaultResource {
		u, err = r.newPod(key)
		if err == nil && len(ch.Labels) > 0 {
			u.SetLabels(ch.Labels)
		}
		if err == nil && len(ch.Finalizers) > 0 {
			u.SetFinalizers(ch.Finalizers)
		}
	} else {
		u, err = r.newObject(resource, key, ch)
	}
	if err != nil {
		return err
	}
	if ownerRes != "" {
		if err := r.setOwner(u, ownerRes, ownerKey); err != nil {
			return err
		}
	}
	if managed {
		u.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply,
			APIVersion: "v1", Time: &metav1.Time{Time: r.clock.Now()}, FieldsType: "FieldsV1",
			FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{}}}`)}}})
	}
	w, err := r.writerOf(resource)
	if err != nil {
		return err
	}
	out, err := w.Create(r.ctx, u)
	if err != nil {
		return err
	}
	r.wrote(nil, out)
	r.etcdChanged()
	text := "create " + refLong(resource, out)
	uidKey := scenario.ObjectRef(resource, key)
	if old, ok := r.uidOf[uidKey]; ok {
		text += fmt.Sprintf(" (a new object: uid %s, where %s had %s)", out.GetUID(), key, old)
	}
	if r.uidOf == nil {
		r.uidOf = map[string]string{}
	}
	r.uidOf[uidKey] = string(out.GetUID())
	r.noteWrite("create", out, "", text)
	return nil
}

// stored is the writer of resource's objects, and the object under key
// as it is stored now.
func (r *runner) stored(resource, key string) (objectWriter, *unstructured.Unstructured, error) {
	w, err := r.writerOf(resource)
	if err != nil {
		return nil, nil, err
	}
	ns, name := scenario.SplitKey(key)
	u, err := w.Get(r.ctx, ns, name)
	return w, u, err
}

func (r *runner) update(resource, key string, ch objects.Change) error {
	w, u, err := r.stored(resource, key)
	if err != nil {
		return err
	}
	old := ref(resource, u)
	before := u.DeepCopy()
	if err := ch.Apply(u); err != nil {
		return err
	}
	out, err := w.Update(r.ctx, u)
	if err != nil {
		return err
	}
	if listwatch.Finalized(out) {
		// The update took the last finalizer of an object being
		// deleted: kube-apiserver deleted it instead (E18).
		return r.removedAs(before, out, fmt.Sprintf("update %s: its last finalizer goes, and it is being deleted, so kube-apiserver deletes it", old))
	}
	r.wrote(before, out)
	r.etcdChanged()
	r.noteWrite("update", out, before.GetResourceVersion(), "update "+old+" -> "+trace.DescribeLong(out))
	return nil
}

func (r *runner) delete(resource, key string) error {
	w, before, err := r.stored(resource, key)
	if err != nil {
		return err
	}
	out, err := w.Delete(r.ctx, before.GetNamespace(), before.GetName(), listwatch.Preconditions{})
	if err != nil {
		return err
	}
	if len(out.GetFinalizers()) == 0 {
		return r.removed(out, "delete "+ref(resource, out))
	}
	// Its finalizers hold it (E18): kube-apiserver only marks it.
	if out.GetResourceVersion() == before.GetResourceVersion() {
		r.note(trace.LayerEtcd, "", fmt.Sprintf("delete %s: it is being deleted already, held by its finalizers (%s): nothing changes",
			ref(resource, out), strings.Join(out.GetFinalizers(), ",")))
		return nil
	}
	r.wrote(before, out)
	r.etcdChanged()
	r.noteWrite("update", out, before.GetResourceVersion(), fmt.Sprintf("delete %s: its finalizers hold it, so kube-apiserver marks it being deleted and keeps it: %s",
		ref(resource, before), trace.DescribeLong(out)))
	return nil
}

// removed notes that last, as it was last stored, is gone from etcd;
// what says how.
func (r *runner) removed(last *unstructured.Unstructured, what string) error {
	return r.removedAs(last, last, what)
}

// removedAs is removed where the deletion answered with gone, the object
// as it went: an update that took the last finalizer answers with the
// object at the deletion's resourceVersion, which is what its DELETED
// event carries and what a cluster's informers must reach (wrote).
func (r *runner) removedAs(last, gone *unstructured.Unstructured, what string) error {
	r.wrote(gone, nil)
	r.etcdChanged()
	rev, err := r.revision()
	if err != nil {
		return err
	}
	r.noteWrite("delete", last, "", fmt.Sprintf("%s (at rv %d)", what, rev))
	return nil
}

// updateTimes makes n updates of key in a row, as fast as etcd takes
// them. Each sets the label update=<count> (one more than the stored
// object's), so none is a no-op that kube-apiserver would not write (E2).
func (r *runner) updateTimes(resource, key string, ch objects.Change, n int) error {
	ns, name := scenario.SplitKey(key)
	labels := ch.Labels
	w, err := r.writerOf(resource)
	if err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		u, err := w.Get(r.ctx, ns, name)
		if err != nil {
			return err
		}
		next := map[string]string{}
		for k, v := range u.GetLabels() {
			next[k] = v
		}
		if labels != nil {
			next = map[string]string{}
			for k, v := range labels {
				next[k] = v
			}
		}
		count, _ := strconv.Atoi(u.GetLabels()[updateLabel])
		next[updateLabel] = strconv.Itoa(count + 1)
		ch.Labels = next
		if err := r.update(resource, key, ch); err != nil {
			return err
		}
	}
	return nil
}
