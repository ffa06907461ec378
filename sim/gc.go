package sim

import (
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/cachelab/cachelab/listwatch"
	"github.com/cachelab/cachelab/sim/scenario"
	"github.com/cachelab/cachelab/sim/trace"
)

// The garbage collector's sweep (gc, REFERENCE.md E19). In a cluster
// kube-controller-manager's garbage collector watches every resource
// and, a moment after an owner goes, deletes each dependent whose owners
// are all gone (background propagation, the default). Here it is a
// lever the scenario pulls, so that the moment between the owner's
// delete and its dependents' is one the scenario decides, and the
// trace shows: until gc, an owned configmap outlives its deployment.
// Foreground deletion (the owner waits, with the foregroundDeletion
// finalizer, for its blocking dependents) and orphaning are not
// modelled.

// owned is an object the sweep looked at: of which resource.
type owned struct {
	resource string // as the scenario names it
	obj      *unstructured.Unstructured
}

// cmdGC is gc: delete every object whose owners are all gone, as the
// garbage collector confirms an owner is gone (its uid is nowhere),
// with the object's uid as the delete's precondition; then again, for
// the objects those deletes left without owners, until none is left.
// An object its finalizers hold stays, being deleted, and so keeps its
// own dependents.
func cmdGC(w *etcdWorld, _ scenario.Args) error {
	r := w.r
	swept := 0
	for {
		objs, err := r.everyObject()
		if err != nil {
			return err
		}
		uids := make(map[types.UID]bool, len(objs))
		for _, o := range objs {
			uids[o.obj.GetUID()] = true
		}
		n := 0
		for _, o := range objs {
			gone, ok := ownersGone(o.obj, uids)
			if !ok {
				continue
			}
			if err := r.collect(o, gone); err != nil {
				return err
			}
			n++
		}
		if n == 0 {
			break
		}
		swept += n
	}
	if swept == 0 {
		r.note(trace.LayerEtcd, "", "gc: no object has lost all its owners: nothing to delete")
	}
	return nil
}

// ownersGone is the owner of obj the sweep names as gone, and whether
// obj is garbage: it has owners, all gone, and no delete has marked it.
func ownersGone(obj *unstructured.Unstructured, uids map[types.UID]bool) (metav1.OwnerReference, bool) {
	refs := obj.GetOwnerReferences()
	if len(refs) == 0 || obj.GetDeletionTimestamp() != nil {
		return metav1.OwnerReference{}, false
	}
	for _, o := range refs {
		if uids[o.UID] {
			return metav1.OwnerReference{}, false
		}
	}
	return refs[0], true
}

// collect deletes o, whose owner gone is gone, as the garbage collector
// does: with o's uid as a precondition, so that an object made since
// under the same name is not touched.
func (r *runner) collect(o owned, gone metav1.OwnerReference) error {
	uid := o.obj.GetUID()
	w, err := r.writerOf(o.resource)
	if err != nil {
		return err
	}
	out, err := w.Delete(r.ctx, o.obj.GetNamespace(), o.obj.GetName(), listwatch.Preconditions{UID: &uid})
	if err != nil {
		return err
	}
	why := fmt.Sprintf("gc: %s's owner %s %s (uid %s) is gone", ref(o.resource, o.obj), gone.Kind, gone.Name, gone.UID)
	if len(out.GetFinalizers()) == 0 {
		return r.removed(out, why+", so the garbage collector deletes it")
	}
	r.wrote(o.obj, out)
	r.etcdChanged()
	r.noteWrite("update", out, o.obj.GetResourceVersion(), why+"; its finalizers hold it, so kube-apiserver marks it being deleted and keeps it: "+trace.DescribeLong(out))
	return nil
}

// everyObject is every object of every resource the run has written, in
// the order of scenario.Resources, then by key.
func (r *runner) everyObject() ([]owned, error) {
	var out []owned
	for _, name := range r.resourceNames() {
		lw := listwatch.NewListerWatcher(r.storage().client(), r.resourceNamed(name), listwatch.Options{})
		list, err := lw.ListWithContext(r.ctx, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("gc: listing %s: %w", name, err)
		}
		ul, ok := list.(*unstructured.UnstructuredList)
		if !ok {
			return nil, fmt.Errorf("gc: listing %s gave a %T", name, list)
		}
		items := make([]owned, len(ul.Items))
		for i := range ul.Items {
			items[i] = owned{name, &ul.Items[i]}
		}
		sort.Slice(items, func(i, j int) bool { return trace.KeyOf(items[i].obj) < trace.KeyOf(items[j].obj) })
		out = append(out, items...)
	}
	return out, nil
}
