// Package skeleton is reconcile.go as a learner gets it, its comments
// aside: TestSkeletonFails runs the lab on it, so that CI proves the
// skeleton fails whatever the learner's reconcile.go holds, and
// notebooks/internal/lab checks that it is still reconcile.go's code.
package skeleton

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/examples/fooctl"
)

// Reconcile is reconcile.go's, with fooctl.Mistaken's mistakes.
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

// OnDelete is reconcile.go's: it drops a tombstone.
func OnDelete(c *fooctl.Controller) func(obj any) {
	return func(obj any) {
		f, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return
		}
		_ = c.Unregister(context.Background(), f.GetNamespace(), f.GetName())
	}
}
