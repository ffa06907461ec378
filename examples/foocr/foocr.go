// Package foocr is package fooctl's operator written with
// controller-runtime, as a kubebuilder project writes one: a Manager, a
// controller For Foos that Owns their ConfigMaps and Deployments, and a
// Reconciler whose reads come from the Manager's cache. Its reconcile is
// fooctl's, in controller-runtime's words, and again written twice:
// Reconciler.Variant switches on the same mistakes.
//
// What a test gives it to run in a controllertest world (Run):
//
//   - the world's *rest.Config, for the Manager;
//   - a work queue on the world's clock that reports to the world
//     (controller.Options.NewQueue): controller-runtime's default queue,
//     its priority queue, runs on the wall clock, which the world cannot
//     move or see;
//   - no metrics server, no health probes, no leader election: a Manager
//     per placement, in one process, binds no port;
//   - SkipNameValidation: each placement's Manager names its controller
//     "foo" again;
//   - Foos, which are unstructured here, read from the cache
//     (client.CacheOptions.Unstructured), as a kubebuilder project's
//     typed ones are.
package foocr

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/cachelab/cachelab/examples/fooctl"
)

// FooKind is Foo's kind, in its group version.
var FooKind = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Foo"}

func newFoo() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(FooKind)
	return u
}

// Options is what Run runs the operator with.
type Options struct {
	Config  *rest.Config
	Clock   clock.WithTicker          // the queue's clock
	Metrics workqueue.MetricsProvider // the queue's metrics
	// Variant is the operator: fixed, or with fooctl's mistakes, in
	// controller-runtime's words (Reconciler).
	Variant fooctl.Variant
}

// Run runs the operator's Manager until ctx ends.
func Run(ctx context.Context, opts Options) error {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(opts.Config, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// Foos are unstructured here (a kubebuilder project has Go
		// types for them), which controller-runtime's client reads
		// from the server, not from the cache, unless told.
		Client:     client.Options{Cache: &client.CacheOptions{Unstructured: true}},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		return err
	}
	r := &Reconciler{Client: mgr.GetClient(), Variant: opts.Variant}
	var preds []predicate.Predicate
	if opts.Variant.Status {
		// fooctl.Options.Status, as a kubebuilder project says it.
		preds = append(preds, predicate.GenerationChangedPredicate{})
	}
	b := ctrl.NewControllerManagedBy(mgr).
		Named("foo").
		For(newFoo(), builder.WithPredicates(preds...)).
		Owns(&corev1.ConfigMap{}).
		Owns(&appsv1.Deployment{}).
		WithOptions(controller.Options{
			MaxConcurrentReconciles: 1,
			NewQueue: func(name string, rl workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
				return workqueue.NewTypedRateLimitingQueueWithConfig(rl, workqueue.TypedRateLimitingQueueConfig[reconcile.Request]{
					Name: name, Clock: opts.Clock, MetricsProvider: opts.Metrics})
			},
		})
	if opts.Variant.Mistaken {
		// MISTAKE 2 (fooctl.Mistaken's): the registration is removed
		// when a delete event comes, not held for by a finalizer.
		b = b.Watches(newFoo(), handler.Funcs{DeleteFunc: r.cleanup})
	}
	if opts.Variant.Sweep {
		// MISTAKE 3 (fooctl.MistakenSweep's): a child whose Foo the
		// cache does not hold is deleted.
		sweep := handler.Funcs{
			CreateFunc: func(ctx context.Context, e event.CreateEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				r.sweep(ctx, e.Object)
			},
			UpdateFunc: func(ctx context.Context, e event.UpdateEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				r.sweep(ctx, e.ObjectNew)
			},
		}
		b = b.Watches(&corev1.ConfigMap{}, sweep).Watches(&appsv1.Deployment{}, sweep)
	}
	if err := b.Complete(r); err != nil {
		return err
	}
	return mgr.Start(ctx)
}

// Reconciler reconciles a Foo.
type Reconciler struct {
	client.Client
	// Variant says which of fooctl's mistakes it makes: Mistaken's (the
	// Deployment found by a list of the cache and made with generateName
	// when missing, and the registration removed on a delete event),
	// MistakenSweep's, Swallowing's (with Status, which also reports the
	// Foo's color in its status).
	Variant fooctl.Variant
	// Written are its own writes, to tell a cache behind them
	// (fooctl.Written).
	Written fooctl.Written
}

// Reconcile is fooctl.Fixed (or Mistaken) with controller-runtime's
// client, whose reads come from the Manager's cache.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	err := r.reconcile(ctx, req)
	if r.Variant.Swallow && apierrors.IsConflict(err) {
		return reconcile.Result{}, nil // MISTAKE 4 (fooctl.Swallowing's)
	}
	return reconcile.Result{}, err
}

func (r *Reconciler) reconcile(ctx context.Context, req reconcile.Request) error {
	f := newFoo()
	if err := r.Get(ctx, req.NamespacedName, f); err != nil {
		return client.IgnoreNotFound(err)
	}
	if r.Variant.Swallow {
		return r.swallowing(ctx, f)
	}
	if !r.Variant.Mistaken {
		if r.Written.Behind("foos", f) {
			return nil // the event of its own write is on its way
		}
		if f.GetDeletionTimestamp() != nil {
			if err := r.unregister(ctx, f); err != nil {
				return err
			}
			controllerutil.RemoveFinalizer(f, fooctl.Finalizer)
			return r.update(ctx, "foos", f)
		}
		if controllerutil.AddFinalizer(f, fooctl.Finalizer) {
			// Update leaves the Foo as written in f: with Status,
			// whose predicate takes no event of this write, go on
			// with it.
			if err := r.update(ctx, "foos", f); err != nil || !r.Variant.Status {
				return err
			}
		}
	}
	if err := r.children(ctx, f); err != nil || !r.Variant.Status {
		return err
	}
	return r.report(ctx, f)
}

// children makes the Foo's registration, ConfigMap and Deployment.
func (r *Reconciler) children(ctx context.Context, f *unstructured.Unstructured) error {
	if err := r.register(ctx, f); err != nil {
		return err
	}
	if err := r.ensureConfigMap(ctx, f); err != nil {
		return err
	}
	return r.ensureDeployment(ctx, f)
}

// swallowing is fooctl.StaleStatus: the children first, then the
// finalizer, then the status. controller-runtime's client leaves in f
// what the server stored, so the status is written from the Foo as the
// finalizer's write left it, not as read.
func (r *Reconciler) swallowing(ctx context.Context, f *unstructured.Unstructured) error {
	if f.GetDeletionTimestamp() != nil {
		if err := r.unregister(ctx, f); err != nil {
			return err
		}
		controllerutil.RemoveFinalizer(f, fooctl.Finalizer)
		return r.update(ctx, "foos", f)
	}
	if err := r.children(ctx, f); err != nil {
		return err
	}
	if controllerutil.AddFinalizer(f, fooctl.Finalizer) {
		if err := r.update(ctx, "foos", f); err != nil {
			return err
		}
	}
	return r.report(ctx, f)
}

// report writes f's color in its status, if it does not say it already.
func (r *Reconciler) report(ctx context.Context, f *unstructured.Unstructured) error {
	if got, _, _ := unstructured.NestedString(f.Object, "status", "color"); got == color(f) {
		return nil
	}
	if err := unstructured.SetNestedField(f.Object, color(f), "status", "color"); err != nil {
		return err
	}
	if err := r.Status().Update(ctx, f); err != nil {
		return err
	}
	r.Written.Note("foos", f)
	return nil
}

// sweep is fooctl.MistakenSweep: it deletes obj, a child, if the cache
// does not hold its Foo.
func (r *Reconciler) sweep(ctx context.Context, obj client.Object) {
	ref := metav1.GetControllerOf(obj)
	if ref == nil || ref.Kind != "Foo" {
		return
	}
	err := r.Get(ctx, client.ObjectKey{Namespace: obj.GetNamespace(), Name: ref.Name}, newFoo())
	if apierrors.IsNotFound(err) {
		_ = r.Delete(ctx, obj, client.Preconditions{UID: ptr.To(obj.GetUID())})
	}
}

// update writes obj, and notes the write.
func (r *Reconciler) update(ctx context.Context, kind string, obj client.Object) error {
	if err := r.Update(ctx, obj); err != nil {
		return err
	}
	r.Written.Note(kind, obj)
	return nil
}

func registration(f client.Object) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: fooctl.Registry, Name: f.GetNamespace() + "." + f.GetName()}}
}

func (r *Reconciler) register(ctx context.Context, f client.Object) error {
	err := r.Create(ctx, registration(f))
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

func (r *Reconciler) unregister(ctx context.Context, f client.Object) error {
	return client.IgnoreNotFound(r.Delete(ctx, registration(f)))
}

// cleanup is Mistaken's handler of Foo deletions.
func (r *Reconciler) cleanup(ctx context.Context, e event.DeleteEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	_ = r.unregister(ctx, e.Object)
}

func color(f *unstructured.Unstructured) string {
	c, _, _ := unstructured.NestedString(f.Object, "spec", "color")
	return c
}

func replicas(f *unstructured.Unstructured) int32 {
	n, _, _ := unstructured.NestedInt64(f.Object, "spec", "replicas")
	return int32(n)
}

func (r *Reconciler) ensureConfigMap(ctx context.Context, f *unstructured.Unstructured) error {
	cm := &corev1.ConfigMap{}
	err := r.Get(ctx, client.ObjectKey{Namespace: f.GetNamespace(), Name: f.GetName() + "-config"}, cm)
	switch {
	case apierrors.IsNotFound(err):
		cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: f.GetNamespace(), Name: f.GetName() + "-config"},
			Data: map[string]string{"color": color(f)}}
		if err := controllerutil.SetControllerReference(f, cm, r.Scheme()); err != nil {
			return err
		}
		if err := r.Create(ctx, cm); !apierrors.IsAlreadyExists(err) {
			return err
		}
		return nil
	case err != nil:
		return err
	case cm.Data["color"] == color(f) || r.Written.Behind("configmaps", cm):
		return nil
	}
	cm.Data = map[string]string{"color": color(f)}
	return r.update(ctx, "configmaps", cm)
}

func (r *Reconciler) ensureDeployment(ctx context.Context, f *unstructured.Unstructured) error {
	if r.Variant.Mistaken {
		// MISTAKE 1 (fooctl.Mistaken's): the cache's list taken for the
		// truth, a missing child made again under a new name.
		ds := &appsv1.DeploymentList{}
		if err := r.List(ctx, ds, client.InNamespace(f.GetNamespace()), client.MatchingLabels{"app": f.GetName()}); err != nil {
			return err
		}
		if len(ds.Items) > 0 {
			return nil
		}
		d := r.deployment(f)
		d.Name, d.GenerateName = "", f.GetName()+"-"
		if err := controllerutil.SetControllerReference(f, d, r.Scheme()); err != nil {
			return err
		}
		return r.Create(ctx, d)
	}
	d := &appsv1.Deployment{}
	err := r.Get(ctx, client.ObjectKey{Namespace: f.GetNamespace(), Name: f.GetName()}, d)
	switch {
	case apierrors.IsNotFound(err):
		d = r.deployment(f)
		if err := controllerutil.SetControllerReference(f, d, r.Scheme()); err != nil {
			return err
		}
		if err := r.Create(ctx, d); !apierrors.IsAlreadyExists(err) {
			return err
		}
		return nil
	case err != nil:
		return err
	case d.Spec.Replicas != nil && *d.Spec.Replicas == replicas(f) || r.Written.Behind("deployments", d):
		return nil
	}
	d.Spec.Replicas = ptr.To(replicas(f))
	return r.update(ctx, "deployments", d)
}

func (r *Reconciler) deployment(f *unstructured.Unstructured) *appsv1.Deployment {
	labels := map[string]string{"app": f.GetName()}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.GetNamespace(), Name: f.GetName(), Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas(f)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}}},
			},
		},
	}
}
