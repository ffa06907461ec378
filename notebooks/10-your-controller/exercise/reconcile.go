// Package exercise is chapter 10's lab: fix the Foo operator's reconcile
// (package fooctl's Controller, its informers and its queue, with your
// Reconcile and OnDelete) until the explorer finds nothing broken:
//
//	go test -tags lab -v ./notebooks/10-your-controller/exercise
//
// The checks play fooctl's story (a Foo made, its color changed, and
// deleted) around your operator with no fault, with a partition over
// the Foo's delete, and with a stop over it, each in a world of its own
// (controllertest's Explore.Play), and hold every invariant: the built-in
// ones (converges, no-stale-writes, no-orphans, no-duplicates,
// no-finalizer-left) and the operator's (registered, colored). As handed
// out, this file has fooctl's Mistaken in it, both mistakes. The
// reference solution is in solution/; try without it first.
package exercise

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/examples/fooctl"
)

// Reconcile makes the Foo under key right: registered in the registry
// (c.Register), its ConfigMap saying its color (c.EnsureConfigMap), and
// a Deployment running its replicas. It reads the Foo from the cache
// (c.Foo: nil when the cache has none). An error puts the key back on
// the queue, after a backoff; nil forgets its failures.
//
// What you have to work with, in package fooctl: c.Foo, c.Register,
// c.Unregister, c.EnsureConfigMap, c.SetFinalizer (which remembers the
// write in c.Written), fooctl.Finalizer, fooctl.Spec,
// fooctl.NewDeployment, the listers c.Deployments and c.ConfigMaps, the
// clients c.Kube and c.Dynamic, and c.Written.Behind, which tells a
// cache that has not yet seen the controller's own last write.
func Reconcile(ctx context.Context, c *fooctl.Controller, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	f, err := c.Foo(key)
	if err != nil || f == nil {
		return err // gone: its children go with it (their ownerReferences)
	}
	if err := c.Register(ctx, ns, name); err != nil {
		return err
	}
	if err := c.EnsureConfigMap(ctx, f); err != nil {
		return err
	}
	return ensureDeployment(ctx, c, f)
}

// ensureDeployment makes the Foo's Deployment, if the cache has none.
func ensureDeployment(ctx context.Context, c *fooctl.Controller, f *unstructured.Unstructured) error {
	_, replicas := fooctl.Spec(f)
	ds, err := c.Deployments.Deployments(f.GetNamespace()).List(labels.SelectorFromSet(labels.Set{"app": f.GetName()}))
	if err != nil {
		return err
	}
	if len(ds) > 0 {
		return nil
	}
	d := fooctl.NewDeployment(f, replicas, f.GetName()+"-") // a name the server makes up
	_, err = c.Kube.AppsV1().Deployments(f.GetNamespace()).Create(ctx, d, metav1.CreateOptions{})
	return err
}

// OnDelete is the operator's handler of Foo deletions (its informer's
// OnDelete), or nil for none: here, it removes the registration of a
// Foo it is told was deleted.
func OnDelete(c *fooctl.Controller) func(obj any) {
	return func(obj any) {
		f, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return
		}
		_ = c.Unregister(context.Background(), f.GetNamespace(), f.GetName())
	}
}
