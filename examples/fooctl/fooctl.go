// Package fooctl is a small operator, the worked example of package
// controllertest: a custom resource, Foo, that owns a ConfigMap and a
// Deployment, and registers itself in a system outside the operator's
// resources (here, a ConfigMap per Foo in the "registry" namespace,
// standing in for a DNS record, a cloud load balancer, a row in a
// database), which only the operator can clean up.
//
//	Foo ns0/f (spec.color, spec.replicas)
//	 ├─ owns ConfigMap ns0/f-config   data.color = spec.color
//	 ├─ owns Deployment ns0/f         spec.replicas = spec.replicas
//	 └─ registered as ConfigMap registry/ns0.f (no owner: outside the cluster's garbage collection)
//
// It is written as kubernetes/sample-controller writes one: informers
// for each resource, a handler that puts the Foo's key on a rate-limited
// work queue, and a worker that reconciles one key at a time (this
// file). The reconcile is written twice: Fixed (fixed.go), and Mistaken
// (mistaken.go), which makes mistakes real operators have made; two
// more mistakes are made each on their own (MistakenSweep, Swallowing),
// and a Variant says which operator Make makes. The tests explore them
// under every placement of the default faults; the explorer finds each
// mistake, and the fixed operator keeps every invariant.
package fooctl

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
)

// CRD is Foo's CustomResourceDefinition.
const CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: foos.example.com
spec:
  group: example.com
  names: {plural: foos, singular: foo, kind: Foo, listKind: FooList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              color: {type: string}
              replicas: {type: integer, default: 1}
`

// StatusCRD is CRD with the status subresource, and a status whose
// color the operator reports (Options.Status): the color its ConfigMap
// has been given.
const StatusCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: foos.example.com
spec:
  group: example.com
  names: {plural: foos, singular: foo, kind: Foo, listKind: FooList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              color: {type: string}
              replicas: {type: integer, default: 1}
          status:
            type: object
            properties:
              color: {type: string}
`

// Foos is Foo's resource.
var Foos = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "foos"}

// Finalizer is the finalizer the operator puts on each Foo, to clean up
// its registration before the Foo goes.
const Finalizer = "example.com/registration"

// Registry is the namespace of the registrations.
const Registry = "registry"

// Options is what a Controller runs with: where the server is, and,
// for a test, the clock and metrics its queue takes.
type Options struct {
	Config *rest.Config
	// Clock is the queue's clock (the wall clock's if nil).
	Clock clock.WithTicker
	// Metrics is the queue's metrics provider (none if nil).
	Metrics workqueue.MetricsProvider
	// Reconcile is the reconcile: Fixed, Mistaken, Swallowing or
	// StaleStatus (Make sets it for a Variant).
	Reconcile func(ctx context.Context, c *Controller, key string) error
	// Status makes it report each Foo's color in the Foo's status
	// (StatusCRD's status subresource), and, as a kubebuilder project
	// does to keep its own status writes from waking it (its
	// GenerationChangedPredicate), take no update of a Foo that leaves
	// the Foo's generation as it was: a status write, a finalizer put
	// on or taken off.
	Status bool
}

// Controller is the operator: its clients, informers and queue.
type Controller struct {
	Kube    kubernetes.Interface
	Dynamic dynamic.Interface

	Foos        cache.GenericLister
	ConfigMaps  corelisters.ConfigMapLister
	Deployments appslisters.DeploymentLister

	fooInformer cache.SharedIndexInformer
	children    []cache.SharedIndexInformer
	status      bool
	Queue       workqueue.TypedRateLimitingInterface[string]
	// Written are Fixed's own writes, to tell a cache behind them.
	Written     Written
	reconcile   func(ctx context.Context, c *Controller, key string) error
	kubeFactory informers.SharedInformerFactory
	fooFactory  dynamicinformer.DynamicSharedInformerFactory
	synced      []cache.InformerSynced
}

// New makes a controller; Run starts it.
func New(opts Options) (*Controller, error) {
	kube, err := kubernetes.NewForConfig(opts.Config)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(opts.Config)
	if err != nil {
		return nil, err
	}
	c := &Controller{Kube: kube, Dynamic: dyn, reconcile: opts.Reconcile, status: opts.Status,
		kubeFactory: informers.NewSharedInformerFactory(kube, 0),
		fooFactory:  dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0)}
	c.Queue = workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "foos", Clock: opts.Clock, MetricsProvider: opts.Metrics})
	foos := c.fooFactory.ForResource(Foos)
	cms := c.kubeFactory.Core().V1().ConfigMaps()
	deps := c.kubeFactory.Apps().V1().Deployments()
	c.Foos, c.ConfigMaps, c.Deployments = foos.Lister(), cms.Lister(), deps.Lister()
	c.fooInformer = foos.Informer()
	c.children = []cache.SharedIndexInformer{cms.Informer(), deps.Informer()}
	c.synced = []cache.InformerSynced{foos.Informer().HasSynced, cms.Informer().HasSynced, deps.Informer().HasSynced}
	if _, err := foos.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: c.enqueue,
		UpdateFunc: func(old, obj any) {
			if c.status && generation(old) == generation(obj) {
				return // Options.Status
			}
			c.enqueue(obj)
		},
		DeleteFunc: c.enqueue,
	}); err != nil {
		return nil, err
	}
	// A child's change wakes its owner, as sample-controller's
	// handleObject does.
	for _, inf := range c.children {
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    c.enqueueOwner,
			UpdateFunc: func(_, obj any) { c.enqueueOwner(obj) },
			DeleteFunc: c.enqueueOwner,
		}); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// OnFooDelete adds a handler of Foo deletions (Mistaken's).
func (c *Controller) OnFooDelete(f func(obj any)) error {
	_, err := c.fooInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{DeleteFunc: f})
	return err
}

// OnChild adds a handler of the events of the Foos' children,
// ConfigMaps and Deployments (MistakenSweep).
func (c *Controller) OnChild(f func(obj any)) error {
	for _, inf := range c.children {
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    f,
			UpdateFunc: func(_, obj any) { f(obj) },
		}); err != nil {
			return err
		}
	}
	return nil
}

// Run starts the informers, waits for their caches, and reconciles one
// key at a time until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	defer c.Queue.ShutDown()
	c.kubeFactory.Start(ctx.Done())
	c.fooFactory.Start(ctx.Done())
	defer c.kubeFactory.Shutdown()
	defer c.fooFactory.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), c.synced...) {
		return ctx.Err()
	}
	go func() {
		for c.processNextItem(ctx) {
		}
	}()
	<-ctx.Done()
	return nil
}

func (c *Controller) processNextItem(ctx context.Context) bool {
	key, shutdown := c.Queue.Get()
	if shutdown {
		return false
	}
	defer c.Queue.Done(key)
	if err := c.reconcile(ctx, c, key); err != nil {
		c.Queue.AddRateLimited(key)
		return true
	}
	c.Queue.Forget(key)
	return true
}

func (c *Controller) enqueue(obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err == nil {
		c.Queue.Add(key)
	}
}

// enqueueOwner puts the key of the Foo that controls obj on the queue.
func (c *Controller) enqueueOwner(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	m, err := metaOf(obj)
	if err != nil {
		return
	}
	if ref := metav1.GetControllerOf(m); ref != nil && ref.Kind == "Foo" {
		c.Queue.Add(m.GetNamespace() + "/" + ref.Name)
	}
}

func generation(obj any) int64 {
	if m, err := metaOf(obj); err == nil {
		return m.GetGeneration()
	}
	return 0
}

func metaOf(obj any) (metav1.Object, error) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil, fmt.Errorf("fooctl: %T is not an object", obj)
	}
	return m, nil
}

// Foo is the Foo under key from the cache, or nil if there is none.
func (c *Controller) Foo(key string) (*unstructured.Unstructured, error) {
	obj, err := c.Foos.Get(key)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return obj.(*unstructured.Unstructured), nil
}

// Spec is a Foo's color and replicas.
func Spec(f *unstructured.Unstructured) (color string, replicas int32) {
	color, _, _ = unstructured.NestedString(f.Object, "spec", "color")
	n, _, _ := unstructured.NestedInt64(f.Object, "spec", "replicas")
	return color, int32(n)
}

// owner is the ownerReference that makes f its child's controller.
func owner(f *unstructured.Unstructured) metav1.OwnerReference {
	yes := true
	return metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "Foo", Name: f.GetName(), UID: f.GetUID(),
		Controller: &yes, BlockOwnerDeletion: &yes}
}

// registration is the name of a Foo's registration.
func registration(ns, name string) string { return ns + "." + name }

// Timeout bounds each request of a reconcile.
const Timeout = 10 * time.Second
