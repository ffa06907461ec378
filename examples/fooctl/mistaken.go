package fooctl

import (
	"context"

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

// Operator makes the operator, fixed (Fixed) or mistaken (Mistaken, with
// its cleanup on delete, MistakenCleanup); opts.Reconcile is set here.
func Operator(opts Options, mistaken bool) (*Controller, error) {
	opts.Reconcile = Fixed
	if mistaken {
		opts.Reconcile = Mistaken
	}
	c, err := New(opts)
	if err != nil {
		return nil, err
	}
	if mistaken {
		if err := c.OnFooDelete(MistakenCleanup(c)); err != nil {
			return nil, err
		}
	}
	return c, nil
}
