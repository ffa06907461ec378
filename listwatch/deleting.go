package listwatch

import (
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Deletion held by finalizers (E18), as kube-apiserver's generic registry
// does it (registry/generic/registry/store.go) for a resource without
// graceful deletion:
//
//	Delete, finalizers ──► deletionTimestamp now, grace 0 ──► MODIFIED
//	Delete again        ──► nothing written
//	Update              ──► deletionTimestamp kept; no new finalizers (422)
//	Update, none left   ──► key deleted ──► DELETED (the last stored state)
//
// The finalizers' owners (controllers) watch for the deletionTimestamp,
// do their part, and each takes its name off the list; the update that
// takes the last one away is the delete.

// wipeSystemFields drops what a create may not set, as kube-apiserver's
// create handler does (rest.WipeObjectMetaSystemFields) before the
// registry fills in uid and creationTimestamp.
func wipeSystemFields(obj *unstructured.Unstructured) {
	obj.SetDeletionTimestamp(nil)
	obj.SetDeletionGracePeriodSeconds(nil)
	obj.SetSelfLink("")
}

// keepDeletion carries what an update may not change from the stored
// object into next, as rest.BeforeUpdate does: the deletionTimestamp
// always, deletionGracePeriodSeconds where next leaves it out.
func keepDeletion(next, current *unstructured.Unstructured) {
	if ts := current.GetDeletionTimestamp(); ts != nil {
		next.SetDeletionTimestamp(ts)
	}
	if g := current.GetDeletionGracePeriodSeconds(); g != nil && next.GetDeletionGracePeriodSeconds() == nil {
		next.SetDeletionGracePeriodSeconds(g)
	}
}

// deletionUpdateErrors is what apimachinery's ObjectMeta update
// validation (ValidateObjectMetaAccessorUpdate, run by rest.BeforeUpdate)
// finds about deletion, in its order and words, by the same functions:
// a finalizer added to an object being deleted, a deletionTimestamp set
// on one that is not, a deletionGracePeriodSeconds changed. (It checks
// the rest of the metadata too; a Writer's objects are left as they are.)
func deletionUpdateErrors(next, current *unstructured.Unstructured) field.ErrorList {
	md := field.NewPath("metadata")
	var errs field.ErrorList
	if current.GetDeletionTimestamp() != nil {
		errs = append(errs, validation.ValidateNoNewFinalizers(next.GetFinalizers(), current.GetFinalizers(), md.Child("finalizers"))...)
	}
	errs = append(errs, validation.ValidateImmutableField(next.GetDeletionTimestamp(), current.GetDeletionTimestamp(), md.Child("deletionTimestamp"))...)
	return append(errs, validation.ValidateImmutableField(next.GetDeletionGracePeriodSeconds(), current.GetDeletionGracePeriodSeconds(), md.Child("deletionGracePeriodSeconds"))...)
}

// finalizedBy reports whether the update to next deletes the object
// instead (the registry's ShouldDeleteDuringUpdate): it leaves no
// finalizers on an object being deleted with no grace period left.
func finalizedBy(next, current *unstructured.Unstructured) bool {
	return len(next.GetFinalizers()) == 0 && current.GetDeletionTimestamp() != nil && graceOver(current)
}

// markAsDeleting is what kube-apiserver's registry does to an object
// with finalizers that a delete asks to remove (its markAsDeleting): the
// deletionTimestamp is now, unless one is set already (and not later),
// and no grace period. The first mark also raises a generation above 0
// by one (a custom resource's: kube-apiserver's registry keeps one for
// them, package crd; a built-in one's here has none).
func markAsDeleting(obj *unstructured.Unstructured, now time.Time) {
	if g := obj.GetGeneration(); obj.GetDeletionTimestamp() == nil && g > 0 {
		obj.SetGeneration(g + 1)
	}
	if ts := obj.GetDeletionTimestamp(); ts == nil || ts.After(now) {
		t := metav1.NewTime(now)
		obj.SetDeletionTimestamp(&t)
	}
	zero := int64(0)
	obj.SetDeletionGracePeriodSeconds(&zero)
}

// graceOver reports whether an object being deleted has no grace period
// left to wait.
func graceOver(current *unstructured.Unstructured) bool {
	g := current.GetDeletionGracePeriodSeconds()
	return g == nil || *g == 0
}

// Finalized reports whether out, what Update returned, is an object
// the update deleted: it was being deleted, and the update took its
// last finalizer away (E18).
func Finalized(out *unstructured.Unstructured) bool {
	return out != nil && out.GetDeletionTimestamp() != nil && len(out.GetFinalizers()) == 0 && graceOver(out)
}

// checkDelete checks a delete's preconditions against the stored object
// as rest.BeforeDelete does, before anything is written: the uid first,
// then the resourceVersion, each compared as a string, so that one that
// is no number ("", "abc") is simply not the stored one. Its Conflict
// names the kind where other conflicts name the resource
// (`Operation cannot be fulfilled on ConfigMap "x"`), as kube-apiserver's
// does.
func (w *Writer) checkDelete(pre Preconditions, current *unstructured.Unstructured) error {
	gvk := w.res.GroupVersionKind()
	kind := schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}
	if pre.UID != nil && *pre.UID != current.GetUID() {
		return apierrors.NewConflict(kind, current.GetName(), fmt.Errorf(
			"the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated",
			*pre.UID, current.GetUID()))
	}
	if pre.ResourceVersion != nil && *pre.ResourceVersion != current.GetResourceVersion() {
		return apierrors.NewConflict(kind, current.GetName(), fmt.Errorf(
			"the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified",
			*pre.ResourceVersion, current.GetResourceVersion()))
	}
	return nil
}
