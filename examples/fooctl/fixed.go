package fooctl

import (
	"context"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
)

// Fixed reconciles a Foo as it should be:
//
//   - a Foo being deleted has its registration removed, then its
//     finalizer: the registration goes even when the controller missed
//     the delete (the finalizer holds the Foo until it has seen it);
//   - every other Foo gets the finalizer first, then its registration,
//     its ConfigMap and its Deployment, each under a name of its own
//     (not generateName), so that a create from a cache that does not
//     hold the child yet is refused with AlreadyExists, not made twice;
//   - a child is changed only when it differs, and never from a read
//     older than the controller's own last write of it (Written): the
//     cache lags the controller's writes, and such a write is refused
//     with 409 Conflict;
//   - every error, a conflict included, puts the key back on the queue;
//   - with Options.Status, it goes on with the Foo its finalizer's write
//     returned (the write's event is not taken), and reports the color
//     in the Foo's status last.
func Fixed(ctx context.Context, c *Controller, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	f, err := c.Foo(key)
	if err != nil || f == nil {
		return err // gone: its children go with it (their ownerReferences)
	}
	if c.Written.Behind("foos", f) {
		return nil // the event of the controller's own write is on its way
	}
	if f.GetDeletionTimestamp() != nil {
		if err := c.Unregister(ctx, ns, name); err != nil {
			return err
		}
		return c.SetFinalizer(ctx, f, false)
	}
	if !slices.Contains(f.GetFinalizers(), Finalizer) {
		if !c.status {
			return c.SetFinalizer(ctx, f, true) // its update event brings the key back
		}
		// Options.Status: the event of a write that leaves the
		// generation alone is not taken; go on with what the server
		// stored.
		if f, err = c.PutFinalizer(ctx, f, true); err != nil {
			return err
		}
	}
	if err := c.Register(ctx, ns, name); err != nil {
		return err
	}
	if err := c.EnsureConfigMap(ctx, f); err != nil {
		return err
	}
	if err := c.ensureDeployment(ctx, f); err != nil || !c.status {
		return err
	}
	return c.Report(ctx, f)
}

// Report writes f's color in its status (Options.Status), if the status
// does not say it already.
func (c *Controller) Report(ctx context.Context, f *unstructured.Unstructured) error {
	color, _ := Spec(f)
	if got, _, _ := unstructured.NestedString(f.Object, "status", "color"); got == color {
		return nil
	}
	f = f.DeepCopy()
	if err := unstructured.SetNestedField(f.Object, color, "status", "color"); err != nil {
		return err
	}
	out, err := c.Dynamic.Resource(Foos).Namespace(f.GetNamespace()).UpdateStatus(ctx, f, metav1.UpdateOptions{})
	if err == nil {
		c.Written.Note("foos", out)
	}
	return err
}

// SetFinalizer puts the finalizer on f, or takes it off.
func (c *Controller) SetFinalizer(ctx context.Context, f *unstructured.Unstructured, on bool) error {
	_, err := c.PutFinalizer(ctx, f, on)
	return err
}

// PutFinalizer is SetFinalizer, and returns the Foo as the server stored
// it.
func (c *Controller) PutFinalizer(ctx context.Context, f *unstructured.Unstructured, on bool) (*unstructured.Unstructured, error) {
	f = f.DeepCopy()
	fs := slices.DeleteFunc(f.GetFinalizers(), func(s string) bool { return s == Finalizer })
	if on {
		fs = append(fs, Finalizer)
	}
	f.SetFinalizers(fs)
	out, err := c.Dynamic.Resource(Foos).Namespace(f.GetNamespace()).Update(ctx, f, metav1.UpdateOptions{})
	if err != nil {
		return nil, err
	}
	c.Written.Note("foos", out)
	return out, nil
}

// Register records the Foo in the registry, if it is not there.
func (c *Controller) Register(ctx context.Context, ns, name string) error {
	r := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: Registry, Name: registration(ns, name)}}
	_, err := c.Kube.CoreV1().ConfigMaps(Registry).Create(ctx, r, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// Unregister removes the Foo's registration, if it is there.
func (c *Controller) Unregister(ctx context.Context, ns, name string) error {
	err := c.Kube.CoreV1().ConfigMaps(Registry).Delete(ctx, registration(ns, name), metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// EnsureConfigMap makes the Foo's ConfigMap say its color.
func (c *Controller) EnsureConfigMap(ctx context.Context, f *unstructured.Unstructured) error {
	color, _ := Spec(f)
	cm, err := c.ConfigMaps.ConfigMaps(f.GetNamespace()).Get(f.GetName() + "-config")
	switch {
	case apierrors.IsNotFound(err):
		cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: f.GetNamespace(), Name: f.GetName() + "-config",
			OwnerReferences: []metav1.OwnerReference{owner(f)}}, Data: map[string]string{"color": color}}
		_, err = c.Kube.CoreV1().ConfigMaps(f.GetNamespace()).Create(ctx, cm, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil // made already; its event is on its way
		}
		return err
	case err != nil:
		return err
	case cm.Data["color"] == color || c.Written.Behind("configmaps", cm):
		return nil
	}
	cm = cm.DeepCopy()
	cm.Data = map[string]string{"color": color}
	out, err := c.Kube.CoreV1().ConfigMaps(f.GetNamespace()).Update(ctx, cm, metav1.UpdateOptions{})
	if err == nil {
		c.Written.Note("configmaps", out)
	}
	return err
}

// ensureDeployment makes the Foo's Deployment run its replicas.
func (c *Controller) ensureDeployment(ctx context.Context, f *unstructured.Unstructured) error {
	_, replicas := Spec(f)
	d, err := c.Deployments.Deployments(f.GetNamespace()).Get(f.GetName())
	switch {
	case apierrors.IsNotFound(err):
		_, err = c.Kube.AppsV1().Deployments(f.GetNamespace()).Create(ctx, NewDeployment(f, replicas, ""), metav1.CreateOptions{})
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

// NewDeployment is the Foo's Deployment, named after it, or given a
// name by the server from generateName if that is not "".
func NewDeployment(f *unstructured.Unstructured, replicas int32, generateName string) *appsv1.Deployment {
	labels := map[string]string{"app": f.GetName()}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.GetNamespace(), Name: f.GetName(), Labels: labels,
			OwnerReferences: []metav1.OwnerReference{owner(f)}},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}}},
			},
		},
	}
	if generateName != "" {
		d.Name, d.GenerateName = "", generateName
	}
	return d
}
