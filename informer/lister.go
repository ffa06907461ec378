package informer

import (
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/cachelab/cachelab/store"
)

// Lister reads an informer's cache the way controllers do: by key, by
// namespace, by label selector. It never talks to the server, so what it
// returns is as fresh as the cache. It mirrors client-go's GenericLister
// (listers.go); results come in the cache's (random) order, as there.
type Lister struct {
	indexer  store.Indexer
	resource schema.GroupResource
}

// NewLister returns a Lister over indexer; resource names the resource in
// NotFound errors.
func NewLister(indexer store.Indexer, resource schema.GroupResource) *Lister {
	return &Lister{indexer: indexer, resource: resource}
}

// List returns every cached object whose labels match selector.
func (l *Lister) List(selector labels.Selector) ([]runtime.Object, error) {
	return selectObjects(l.indexer.List(), selector)
}

// Get returns the object with the given key ("name" for a cluster-scoped
// resource), or a NotFound error.
func (l *Lister) Get(key string) (runtime.Object, error) {
	return l.get(key, key)
}

func (l *Lister) get(key, name string) (runtime.Object, error) {
	obj, exists, err := l.indexer.GetByKey(key)
	if err != nil {
		return nil, err
	}
	if !exists {
		return nil, apierrors.NewNotFound(l.resource, name)
	}
	return obj.(runtime.Object), nil
}

// ByNamespace returns a Lister for one namespace ("" means all).
func (l *Lister) ByNamespace(namespace string) *NamespaceLister {
	return &NamespaceLister{lister: l, namespace: namespace}
}

// NamespaceLister reads one namespace of an informer's cache.
type NamespaceLister struct {
	lister    *Lister
	namespace string
}

// List returns the namespace's objects whose labels match selector. It
// uses the namespace index if the indexer has one (store.NamespaceIndex),
// and scans everything otherwise.
func (n *NamespaceLister) List(selector labels.Selector) ([]runtime.Object, error) {
	if n.namespace == metav1.NamespaceAll {
		return n.lister.List(selector)
	}
	if labels.MatchesNothing(selector) {
		return nil, nil
	}
	items, err := n.lister.indexer.Index(store.NamespaceIndex, &metav1.ObjectMeta{Namespace: n.namespace})
	if err != nil { // no namespace index: scan
		items = nil
		for _, obj := range n.lister.indexer.List() {
			m, err := meta.Accessor(obj)
			if err != nil {
				return nil, err
			}
			if m.GetNamespace() == n.namespace {
				items = append(items, obj)
			}
		}
	}
	return selectObjects(items, selector)
}

// Get returns the named object of the namespace, or a NotFound error.
func (n *NamespaceLister) Get(name string) (runtime.Object, error) {
	return n.lister.get(n.namespace+"/"+name, name)
}

// selectObjects keeps the objects whose labels match selector.
func selectObjects(objs []any, selector labels.Selector) ([]runtime.Object, error) {
	if labels.MatchesNothing(selector) {
		return nil, nil
	}
	var out []runtime.Object
	for _, obj := range objs {
		if !selector.Empty() {
			m, err := meta.Accessor(obj)
			if err != nil {
				return nil, err
			}
			if !selector.Matches(labels.Set(m.GetLabels())) {
				continue
			}
		}
		out = append(out, obj.(runtime.Object))
	}
	return out, nil
}
