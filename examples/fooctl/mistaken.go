package fooctl

import (
	"context"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
)

// Mistaken reconciles a Foo with two mistakes real operators have made
// (each marked MISTAKE below; Fixed is the same reconcile without them):
//
//  1. It finds the Foo's Deployment by listing its cache, and makes one
//     with generateName when the list has none. A cache that does not
//     hold the Deployment yet (its own create's event has not come, or
//     a relist has not reached it) makes a second.
//  2. It removes the Foo's registration when its informer says the Foo
//     was deleted (OnDelete, MistakenCleanup) instead of holding the Foo
//     with a finalizer. A delete the controller does not see as an
//     object (a relist finds the Foo gone and hands the handler a
//     DeletedFinalStateUnknown) leaves the registration for ever.
func Mistaken(ctx context.Context, c *Controller, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	f, err := c.Foo(key)
	if err != nil || f == nil {
		return err
	}
	if err := c.Register(ctx, ns, name); err != nil {
		return err
	}
	if err := c.EnsureConfigMap(ctx, f); err != nil {
		return err
	}
	// MISTAKE 1: the cache's list is taken for the truth, and a child
	// missing from it is made again, under a new name.
	_, replicas := Spec(f)
	ds, err := c.Deployments.Deployments(ns).List(labels.SelectorFromSet(labels.Set{"app": name}))
	if err != nil {
		return err
	}
	if len(ds) == 0 {
		_, err := c.Kube.AppsV1().Deployments(ns).Create(ctx, NewDeployment(f, replicas, name+"-"), metav1.CreateOptions{})
		return err
	}
	return nil
}

// MistakenCleanup is Mistaken's handler of Foo deletions: it removes the
// registration of a Foo it sees deleted.
func MistakenCleanup(c *Controller) func(obj any) {
	return func(obj any) {
		// MISTAKE 2: a tombstone (cache.DeletedFinalStateUnknown) is not
		// a Foo, and is dropped: the registration stays.
		f, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return
		}
		err := c.Kube.CoreV1().ConfigMaps(Registry).Delete(context.Background(), registration(f.GetNamespace(), f.GetName()), metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return
		}
	}
}

// MistakenSweep is a handler of the children's events (OnChild) with a
// third mistake: it deletes a child whose Foo its cache does not hold,
// taking the child for an orphan (its own garbage collection, as an
// operator does for what it cannot give an ownerReference).
//
// MISTAKE 3: a cache not holding the Foo is not the Foo gone. A
// handler runs as its own informer hears of an object, before the
// other informers have heard of theirs: an operator that starts anew
// (a stop's start) hears of a child before its Foo whenever the Foo was
// written after the child, and deletes the child of a live Foo. The
// Foo's reconcile makes it again, under a new uid: every pod of the
// Deployment is replaced.
func MistakenSweep(c *Controller) func(obj any) {
	return func(obj any) {
		m, err := metaOf(obj)
		if err != nil {
			return
		}
		ref := metav1.GetControllerOf(m)
		if ref == nil || ref.Kind != "Foo" {
			return
		}
		if f, err := c.Foo(m.GetNamespace() + "/" + ref.Name); f != nil || err != nil {
			return
		}
		uid := m.GetUID()
		opts := metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}
		switch obj.(type) {
		case *corev1.ConfigMap:
			_ = c.Kube.CoreV1().ConfigMaps(m.GetNamespace()).Delete(context.Background(), m.GetName(), opts)
		case *appsv1.Deployment:
			_ = c.Kube.AppsV1().Deployments(m.GetNamespace()).Delete(context.Background(), m.GetName(), opts)
		}
	}
}

// Swallowing reconciles a Foo as Fixed does with Options.Status, but
// makes a fourth mistake (and needs a second to show it):
//
//   - it writes the Foo's finalizer, and then its status, from the Foo
//     it read: the status write after the finalizer's is answered 409
//     Conflict (no-stale-writes);
//   - MISTAKE 4: it takes a conflict as someone else's write, whose
//     event will bring the key back, and does not requeue. The write
//     was its own, and its event does not come: Options.Status takes
//     no update that leaves the generation alone. The status is never
//     written. (Were the finalizer put on first, the children's events,
//     which come after it, would bring the key back to a Foo the cache
//     holds as written, and hide the mistake.)
func Swallowing(ctx context.Context, c *Controller, key string) error {
	err := StaleStatus(ctx, c, key)
	if apierrors.IsConflict(err) {
		return nil // MISTAKE 4
	}
	return err
}

// StaleStatus is Swallowing without its mistake 4: it still writes the
// status from the Foo it read, and meets the 409, but returns it, and is
// requeued: the status is written once the cache holds the finalizer's
// write.
func StaleStatus(ctx context.Context, c *Controller, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	f, err := c.Foo(key)
	if err != nil || f == nil {
		return err
	}
	if f.GetDeletionTimestamp() != nil {
		if err := c.Unregister(ctx, ns, name); err != nil {
			return err
		}
		return c.SetFinalizer(ctx, f, false)
	}
	if err := c.Register(ctx, ns, name); err != nil {
		return err
	}
	if err := c.EnsureConfigMap(ctx, f); err != nil {
		return err
	}
	if err := c.ensureDeployment(ctx, f); err != nil {
		return err
	}
	if !slices.Contains(f.GetFinalizers(), Finalizer) {
		if err := c.SetFinalizer(ctx, f, true); err != nil {
			return err
		}
	}
	return c.Report(ctx, f) // from the Foo as read, not as its finalizer's write left it
}

// A Variant is which operator runs: fixed, or with which mistakes.
type Variant struct {
	// Mistaken: Mistaken's reconcile and its cleanup on delete
	// (mistakes 1 and 2).
	Mistaken bool
	// Sweep: MistakenSweep on the children's events (mistake 3).
	Sweep bool
	// Status: Options.Status, with Fixed, or with Swallowing if
	// Swallow (mistake 4).
	Status, Swallow bool
}

// String names v as a test would.
func (v Variant) String() string {
	var s []string
	for _, m := range []struct {
		on   bool
		name string
	}{{v.Mistaken, "mistaken"}, {v.Sweep, "sweep"}, {v.Status, "status"}, {v.Swallow, "swallow"}} {
		if m.on {
			s = append(s, m.name)
		}
	}
	if len(s) == 0 {
		return "fixed"
	}
	return strings.Join(s, "+")
}

// Make makes the operator v says; opts.Reconcile and opts.Status are set
// here.
func Make(opts Options, v Variant) (*Controller, error) {
	opts.Reconcile, opts.Status = Fixed, v.Status
	switch {
	case v.Mistaken:
		opts.Reconcile = Mistaken
	case v.Swallow:
		opts.Reconcile = Swallowing
	}
	c, err := New(opts)
	if err != nil {
		return nil, err
	}
	if v.Mistaken {
		if err := c.OnFooDelete(MistakenCleanup(c)); err != nil {
			return nil, err
		}
	}
	if v.Sweep {
		if err := c.OnChild(MistakenSweep(c)); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Operator makes the operator, fixed (Fixed) or mistaken (Mistaken, with
// its cleanup on delete, MistakenCleanup); opts.Reconcile is set here.
func Operator(opts Options, mistaken bool) (*Controller, error) {
	return Make(opts, Variant{Mistaken: mistaken})
}
