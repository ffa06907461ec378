package kubeapiserver

import (
	"context"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/names"

	"github.com/cachelab/cachelab/apistorage"
)

// registry is k8s.io/apiserver's generic registry store for a resource,
// over its apistorage server's storage (its watch cache, or etcd3): it
// picks a request's key range and builds its selection predicate, as for
// every resource kube-apiserver serves, and, for a write, runs the
// resource's strategy and hands the object to storage.
//
// ReturnDeletedObject makes a DELETE answer with the object as it was
// deleted, at the deletion's resourceVersion (the etcd3 store decodes it
// at the delete's revision), as kube-apiserver's pods and namespaces
// answer; without it the answer would be a Status.
func (s *Server) registry(st *apistorage.Server) *genericregistry.Store {
	res := st.Resource()
	prefix := st.ResourcePrefix()
	attrs := storage.DefaultClusterScopedAttr
	keyRoot := func(ctx context.Context) string { return prefix }
	key := func(ctx context.Context, name string) (string, error) {
		return genericregistry.NoNamespaceKeyFunc(ctx, prefix, name)
	}
	if res.Namespaced {
		attrs = storage.DefaultNamespaceScopedAttr
		keyRoot = func(ctx context.Context) string { return genericregistry.NamespaceKeyRootFunc(ctx, prefix) }
		key = func(ctx context.Context, name string) (string, error) {
			return genericregistry.NamespaceKeyFunc(ctx, prefix, name)
		}
	}
	gvk := res.GroupVersionKind()
	strategy := strategy{namespaced: res.Namespaced, admit: s.admits[res.GroupResource()], names: s.names}
	return &genericregistry.Store{
		NewFunc: func() runtime.Object {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(gvk)
			return u
		},
		NewListFunc: func() runtime.Object {
			l := &unstructured.UnstructuredList{}
			l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
			return l
		},
		DefaultQualifiedResource:  res.GroupResource(),
		SingularQualifiedResource: schema.GroupResource{Group: res.Group, Resource: strings.ToLower(res.Kind)},
		KeyRootFunc:               keyRoot,
		KeyFunc:                   key,
		ObjectNameFunc: func(obj runtime.Object) (string, error) {
			m, err := meta.Accessor(obj)
			if err != nil {
				return "", err
			}
			return m.GetName(), nil
		},
		PredicateFunc: func(l labels.Selector, f fields.Selector) storage.SelectionPredicate {
			return storage.SelectionPredicate{Label: l, Field: f, GetAttrs: attrs}
		},
		CreateStrategy:      strategy,
		UpdateStrategy:      strategy,
		DeleteStrategy:      strategy,
		ReturnDeletedObject: true,
		Storage:             genericregistry.DryRunnableStorage{Storage: st.Storage(), Codec: unstructured.UnstructuredJSONScheme},
		TableConvertor:      rest.NewDefaultTableConvertor(res.GroupResource()),
	}
}

// strategy is what the registry does to an object of a resource served
// unstructured before it stores it: nothing of its own. What every
// resource gets is done by the registry around it (rest.BeforeCreate,
// rest.BeforeUpdate): the name generated from generateName, uid and
// creationTimestamp set, the namespace checked against the request's,
// and object metadata validated (names, labels, annotations). There is
// no validation of the rest of the object, no status reset and no
// generation kept: the resource has no schema here, unless
// Options.Admit gives it one (a custom resource's).
//
// kube-apiserver's strategies for custom resources
// (apiextensions-apiserver's customresource/strategy.go) do a little
// more: they keep metadata.generation and validate against the schema.
// kube-apiserver's own pod and namespace strategies do far more; the
// differences a client can see are in doc.go.
type strategy struct {
	typer
	namespaced bool
	admit      Admit                    // Options.Admit's, or nil
	names      func(base string) string // Options.GenerateName, or nil
}

var (
	_ rest.RESTCreateStrategy = strategy{}
	_ rest.RESTUpdateStrategy = strategy{}
	_ rest.RESTDeleteStrategy = strategy{}
)

// NamespaceScoped is whether the resource's objects live in namespaces.
func (s strategy) NamespaceScoped() bool { return s.namespaced }

// GenerateName is names.SimpleNameGenerator's: the prefix and five random
// characters, as kube-apiserver generates them (or Options.GenerateName's).
func (s strategy) GenerateName(base string) string {
	if s.names != nil {
		return s.names(base)
	}
	return names.SimpleNameGenerator.GenerateName(base)
}

// The strategy's own steps, in the order the registry calls them, do
// nothing (see strategy).
func (strategy) PrepareForCreate(context.Context, runtime.Object) {}
func (s strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	if u, ok := obj.(*unstructured.Unstructured); ok && s.admit != nil {
		return s.admit(u.Object, nil)
	}
	return nil
}
func (strategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }
func (strategy) PrepareForUpdate(_ context.Context, _, _ runtime.Object)   {}
func (s strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	u, ok := obj.(*unstructured.Unstructured)
	o, oldOK := old.(*unstructured.Unstructured)
	if ok && oldOK && s.admit != nil {
		return s.admit(u.Object, o.Object)
	}
	return nil
}
func (strategy) WarningsOnUpdate(_ context.Context, _, _ runtime.Object) []string { return nil }
func (strategy) Canonicalize(runtime.Object)                                      {}

// AllowCreateOnUpdate is false: a PUT of an object that does not exist is
// 404 NotFound, as for pods and namespaces in kube-apiserver.
func (strategy) AllowCreateOnUpdate(ctx context.Context) bool { return false }

// AllowUnconditionalUpdate is true: a PUT without a resourceVersion
// overwrites whatever is stored; with one, it must be the stored one
// (409 Conflict otherwise).
func (strategy) AllowUnconditionalUpdate(ctx context.Context) bool { return true }
