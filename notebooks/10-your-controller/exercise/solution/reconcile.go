// Package solution is the reference solution of chapter 10's lab:
// fooctl.Fixed, written out.
package solution

import (
	"context"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/examples/fooctl"
)

// Reconcile makes the Foo under key right. A finalizer holds the Foo
// until its registration is gone: the operator cleans up from the Foo
// it reads (deletionTimestamp set), not from an event it may never get
// (a tombstone after a relist, nothing at all while it is stopped).
func Reconcile(ctx context.Context, c *fooctl.Controller, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	f, err := c.Foo(key)
	if err != nil || f == nil {
		return err // gone: its children go with it (their ownerReferences)
	}
	if c.Written.Behind("foos", f) {
		return nil // the event of our own write is on its way, and brings the key back
	}
	if f.GetDeletionTimestamp() != nil {
		if err := c.Unregister(ctx, ns, name); err != nil {
			return err
		}
		return c.SetFinalizer(ctx, f, false) // the server deletes the Foo
	}
	if !slices.Contains(f.GetFinalizers(), fooctl.Finalizer) {
		return c.SetFinalizer(ctx, f, true) // before anything it will have to clean up
	}
	if err := c.Register(ctx, ns, name); err != nil {
		return err
	}
	if err := c.EnsureConfigMap(ctx, f); err != nil {
		return err
	}
	return ensureDeployment(ctx, c, f)
}

// ensureDeployment makes the Foo's Deployment run its replicas. The
// Deployment is named after the Foo: a create from a cache that has not
// yet seen it is refused with AlreadyExists (its event is on its way),
// not made twice.
func ensureDeployment(ctx context.Context, c *fooctl.Controller, f *unstructured.Unstructured) error {
	_, replicas := fooctl.Spec(f)
	d, err := c.Deployments.Deployments(f.GetNamespace()).Get(f.GetName())
	switch {
	case apierrors.IsNotFound(err):
		_, err = c.Kube.AppsV1().Deployments(f.GetNamespace()).Create(ctx, fooctl.NewDeployment(f, replicas, ""), metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	case err != nil:
		return err
	case d.Spec.Replicas != nil && *d.Spec.Replicas == replicas || c.Written.Behind("deployments", d):
		return nil
	}
	d = d.DeepCopy()
	d.Spec.Replicas = &replicas
	out, err := c.Kube.AppsV1().Deployments(f.GetNamespace()).Update(ctx, d, metav1.UpdateOptions{})
	if err == nil {
		c.Written.Note("deployments", out)
	}
	return err
}

// OnDelete is none: with the finalizer, nothing waits for a delete's
// event.
func OnDelete(c *fooctl.Controller) func(obj any) { return nil }
