// Package dynclient is client-go's dynamic client as its dynamic
// informers use it, client.Resource(gvr).Namespace(ns).List and Watch,
// over ListerWatchers the test gives: so that client-go's dynamic shared
// informer factory runs on the same embedded etcd, through the same
// server path, as cachelab's factory. Only List and Watch are there; any
// other call panics (a nil interface), which a test would see at once.
package dynclient

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/reflector"
)

// New is a dynamic client whose resources list and watch through lw(gvr,
// namespace); the ListerWatcher's List must answer an
// *unstructured.UnstructuredList, as cachelab's etcd ListerWatcher does.
func New(lw func(gvr schema.GroupVersionResource, namespace string) reflector.ListerWatcher) dynamic.Interface {
	return client{lw: lw}
}

type client struct {
	dynamic.Interface // the rest: unused, nil
	lw                func(schema.GroupVersionResource, string) reflector.ListerWatcher
}

func (c client) Resource(gvr schema.GroupVersionResource) dynamic.NamespaceableResourceInterface {
	return resource{gvr: gvr, c: c}
}

type resource struct {
	dynamic.NamespaceableResourceInterface // the rest: unused, nil
	gvr                                    schema.GroupVersionResource
	ns                                     string
	c                                      client
}

func (r resource) Namespace(ns string) dynamic.ResourceInterface { r.ns = ns; return r }

func (r resource) List(ctx context.Context, o metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	obj, err := reflector.ToListerWatcherWithContext(r.c.lw(r.gvr, r.ns)).ListWithContext(ctx, o)
	if err != nil {
		return nil, err
	}
	list, ok := obj.(*unstructured.UnstructuredList)
	if !ok {
		return nil, fmt.Errorf("dynclient: the ListerWatcher answered a %T, not an *unstructured.UnstructuredList", obj)
	}
	return list, nil
}

func (r resource) Watch(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	return reflector.ToListerWatcherWithContext(r.c.lw(r.gvr, r.ns)).WatchWithContext(ctx, o)
}

// ListWatch is the ListerWatcher client-go's dynamic informer makes of a
// dynamic client for one resource and namespace
// (dynamicinformer.NewFilteredDynamicInformer): a cache.ListWatch whose
// calls are r's List and Watch.
func ListWatch(r dynamic.ResourceInterface) *cache.ListWatch {
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return r.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return r.Watch(ctx, o)
		},
	}
}
