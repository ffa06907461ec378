package controllertest

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The garbage collector. A cluster's (kube-controller-manager's
// pkg/controller/garbagecollector, REFERENCE.md E19) deletes, some time
// after an owner is deleted, every dependent whose owners are all
// absent, by uid, with background propagation and the dependent's uid as
// a precondition; a dependent with finalizers is only marked. A
// controller that leaves its children to it is right to, so a world that
// had none would blame the controller for what the cluster does.
//
// The world's is one sweep of it, to a fixed point, each time the world
// settles (SettleAndCollect): "some time after" is placed at the moment
// the controller has done all it will do, the one placement of it a
// world explores. Foreground deletion and orphaning are not modelled.

// CollectGarbage sweeps once, to a fixed point: it deletes, through the
// server as GCUser, every object whose ownerReferences all name objects
// that do not exist. It returns how many it deleted (or marked).
func (w *World) CollectGarbage(ctx context.Context) (int, error) {
	all, err := w.Objects(ctx)
	if err != nil {
		return 0, err
	}
	live := map[types.UID]bool{}
	for _, objs := range all {
		for _, o := range objs {
			live[o.GetUID()] = true
		}
	}
	deleted := 0
	for _, res := range w.resources {
		for _, o := range all[res.Resource] {
			refs := o.GetOwnerReferences()
			if len(refs) == 0 || o.GetDeletionTimestamp() != nil || ownedByAny(refs, live) {
				continue
			}
			c := w.gc.Resource(res.GroupVersionResource()).Namespace(o.GetNamespace())
			uid, background := o.GetUID(), metav1.DeletePropagationBackground
			err := c.Delete(ctx, o.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}, PropagationPolicy: &background})
			switch {
			case err == nil:
				deleted++
			case apierrors.IsNotFound(err), apierrors.IsConflict(err):
				// Gone, or another object under the name since: the
				// next sweep sees what is there.
			default:
				return deleted, fmt.Errorf("controllertest: the garbage collector deleting %s %s/%s: %w", res.Resource, o.GetNamespace(), o.GetName(), err)
			}
		}
	}
	return deleted, nil
}

func ownedByAny(refs []metav1.OwnerReference, live map[types.UID]bool) bool {
	for _, r := range refs {
		if live[r.UID] {
			return true
		}
	}
	return false
}

// SettleAndCollect settles the world, then lets the garbage collector
// sweep, and settles again after each sweep that deleted anything, until
// one deletes nothing.
func (w *World) SettleAndCollect(ctx context.Context) error {
	for range 100 {
		if err := w.Settle(ctx); err != nil {
			return err
		}
		n, err := w.CollectGarbage(ctx)
		if err != nil || n == 0 {
			return err
		}
	}
	return fmt.Errorf("controllertest: the garbage collector is still deleting after 100 sweeps: does the controller make again what it deletes?")
}
