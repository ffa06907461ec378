package listwatch_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/validation"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured/unstructuredscheme"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/endpoints/request"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"
	storagenames "k8s.io/apiserver/pkg/storage/names"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"

	"github.com/cachelab/cachelab/internal/etcdoracle"
	"github.com/cachelab/cachelab/listwatch"
)

// The write oracle: kube-apiserver's own generic registry
// (k8s.io/apiserver v0.37.2 registry/generic/registry.Store) over the
// etcd3 storage its factory builds, on the same etcd as the Writer but
// under a prefix of its own (/oracle instead of /registry), so that each
// side writes and watches its own keys. Both sides do the same thing to
// one namespace's objects: the writes a step makes go to each, and what
// comes back is compared (diff_finalizers_test.go).
//
//	              ┌── listwatch.Writer ──────────► /registry/configmaps/ns/...  ◄── listwatch.ListerWatcher
//	same step ──► │                                        etcd
//	              └── genericregistry.Store ─────► /oracle/configmaps/ns/...    ◄── Store.Watch

// writeSide is one side's writes, reads and watch over one namespace.
type writeSide interface {
	get(ctx context.Context, name string) (*unstructured.Unstructured, error)
	create(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error)
	update(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error)
	delete(ctx context.Context, name string, pre listwatch.Preconditions) (*unstructured.Unstructured, error)
	watch(ctx context.Context, rv string) (watch.Interface, error)
}

// writerSide is cachelab's: the Writer, and a ListerWatcher over its keys.
type writerSide struct {
	w  *listwatch.Writer
	lw *listwatch.ListerWatcher
	ns string
}

func (s writerSide) get(ctx context.Context, name string) (*unstructured.Unstructured, error) {
	return s.w.Get(ctx, s.ns, name)
}

func (s writerSide) create(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	return s.w.Create(ctx, obj)
}

func (s writerSide) update(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	return s.w.Update(ctx, obj)
}

func (s writerSide) delete(ctx context.Context, name string, pre listwatch.Preconditions) (*unstructured.Unstructured, error) {
	return s.w.Delete(ctx, s.ns, name, pre)
}

func (s writerSide) watch(ctx context.Context, rv string) (watch.Interface, error) {
	return s.lw.WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: rv})
}

// registrySide is kube-apiserver's: its registry, called as its REST
// handlers call it (endpoints/handlers create.go, update.go, delete.go),
// with the request's namespace in the context.
type registrySide struct {
	store *genericregistry.Store
	ns    string
}

func (s registrySide) ctx(ctx context.Context) context.Context {
	return request.WithNamespace(ctx, s.ns)
}

func (s registrySide) get(ctx context.Context, name string) (*unstructured.Unstructured, error) {
	out, err := s.store.Get(s.ctx(ctx), name, &metav1.GetOptions{})
	return asUnstructured(out, err)
}

// create wipes the system fields first, as the create handler does
// (rest.WipeObjectMetaSystemFields): a client cannot create an object
// that is being deleted.
func (s registrySide) create(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	obj = obj.DeepCopy()
	rest.WipeObjectMetaSystemFields(obj)
	out, err := s.store.Create(s.ctx(ctx), obj, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
	return asUnstructured(out, err)
}

func (s registrySide) update(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	out, _, err := s.store.Update(s.ctx(ctx), obj.GetName(), rest.DefaultUpdatedObjectInfo(obj.DeepCopy()),
		rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	return asUnstructured(out, err)
}

// delete sends what a client's default DeleteOptions carry: no grace
// period, no propagation policy, only the preconditions asked for.
func (s registrySide) delete(ctx context.Context, name string, pre listwatch.Preconditions) (*unstructured.Unstructured, error) {
	opts := &metav1.DeleteOptions{}
	if pre.UID != nil || pre.ResourceVersion != nil {
		opts.Preconditions = &metav1.Preconditions{UID: pre.UID, ResourceVersion: pre.ResourceVersion}
	}
	out, _, err := s.store.Delete(s.ctx(ctx), name, rest.ValidateAllObjectFunc, opts)
	return asUnstructured(out, err)
}

func (s registrySide) watch(ctx context.Context, rv string) (watch.Interface, error) {
	return s.store.Watch(s.ctx(ctx), &metainternalversion.ListOptions{ResourceVersion: rv, Watch: true})
}

func asUnstructured(obj runtime.Object, err error) (*unstructured.Unstructured, error) {
	if err != nil {
		return nil, err
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("the registry answered with a %T, not the object", obj)
	}
	return u, nil
}

// newWriteSides starts an etcd and both sides over it for res's objects
// in namespace ns.
func newWriteSides(t *testing.T, res listwatch.Resource, ns string) (e *listwatch.Embedded, ours writerSide, theirs registrySide) {
	t.Helper()
	e = startEtcd(t)
	n := 0
	w := listwatch.NewWriter(e.Client(), res, listwatch.WriterOptions{
		NewUID: func() types.UID { n++; return types.UID(fmt.Sprintf("uid-%d", n)) },
		Now:    func() time.Time { return diffEpoch },
	})
	ours = writerSide{w: w, lw: listwatch.NewListerWatcher(e.Client(), res, listwatch.Options{Namespace: ns}), ns: ns}
	return e, ours, registrySide{store: oracleRegistry(t, e, res), ns: ns}
}

// oracleRegistry is kube-apiserver's generic registry store for res,
// over the etcd3 storage its factory builds for e, keyed under /oracle:
// a strategy as for a custom resource without a schema
// (unstructuredStrategy), and garbage collection on, as kube-apiserver
// runs it. ReturnDeletedObject is set, as for kube-apiserver's pods, so
// that a DELETE that removes at once answers with the object, as
// Writer.Delete does; without it (configmaps, custom resources) that
// answer is a Status of success. A DELETE that marks an object as being
// deleted answers with the object either way.
func oracleRegistry(t *testing.T, e *listwatch.Embedded, res listwatch.Resource) *genericregistry.Store {
	t.Helper()
	cfg := etcdoracle.Config(t, e, "/oracle")
	prefix := "/" + res.Resource
	s, destroy, err := factory.Create(*cfg.ForResource(res.GroupResource()), newOf(res), newListOf(res), prefix+"/")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(destroy)
	strategy := unstructuredStrategy{ObjectTyper: unstructuredscheme.NewUnstructuredObjectTyper(), NameGenerator: storagenames.SimpleNameGenerator}
	return &genericregistry.Store{
		NewFunc: newOf(res), NewListFunc: newListOf(res),
		DefaultQualifiedResource: res.GroupResource(),
		KeyRootFunc:              func(ctx context.Context) string { return genericregistry.NamespaceKeyRootFunc(ctx, prefix) },
		KeyFunc: func(ctx context.Context, name string) (string, error) {
			return genericregistry.NamespaceKeyFunc(ctx, prefix, name)
		},
		ObjectNameFunc: func(obj runtime.Object) (string, error) {
			m, err := meta.Accessor(obj)
			if err != nil {
				return "", err
			}
			return m.GetName(), nil
		},
		PredicateFunc: func(l labels.Selector, f fields.Selector) storage.SelectionPredicate {
			return storage.SelectionPredicate{Label: l, Field: f, GetAttrs: storage.DefaultNamespaceScopedAttr}
		},
		CreateStrategy: strategy, UpdateStrategy: strategy, DeleteStrategy: strategy,
		EnableGarbageCollection: true,
		ReturnDeletedObject:     true,
		Storage:                 genericregistry.DryRunnableStorage{Storage: s, Codec: unstructured.UnstructuredJSONScheme},
	}
}

func newOf(res listwatch.Resource) func() runtime.Object {
	return func() runtime.Object {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(res.GroupVersionKind())
		return u
	}
}

func newListOf(res listwatch.Resource) func() runtime.Object {
	return func() runtime.Object {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(res.GroupVersionKind().GroupVersion().WithKind(res.Kind + "List"))
		return l
	}
}

// unstructuredStrategy is the least a namespaced resource served
// unstructured has, as apiextensions-apiserver's strategy for custom
// resources without a schema: nothing prepared, only the object's
// metadata validated (apimachinery's ObjectMeta validation), no create
// on update, updates without a resourceVersion allowed. It is not a
// graceful-delete strategy and names no garbage-collection policy, so a
// DELETE with default options neither waits nor adds a finalizer.
type unstructuredStrategy struct {
	runtime.ObjectTyper
	storagenames.NameGenerator
}

var (
	_ rest.RESTCreateStrategy = unstructuredStrategy{}
	_ rest.RESTUpdateStrategy = unstructuredStrategy{}
	_ rest.RESTDeleteStrategy = unstructuredStrategy{}
)

func (unstructuredStrategy) NamespaceScoped() bool                            { return true }
func (unstructuredStrategy) PrepareForCreate(context.Context, runtime.Object) {}
func (unstructuredStrategy) PrepareForUpdate(context.Context, runtime.Object, runtime.Object) {
}
func (unstructuredStrategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }
func (unstructuredStrategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}
func (unstructuredStrategy) Canonicalize(runtime.Object)                   {}
func (unstructuredStrategy) AllowCreateOnUpdate(context.Context) bool      { return false }
func (unstructuredStrategy) AllowUnconditionalUpdate(context.Context) bool { return true }

func (unstructuredStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	m, err := meta.Accessor(obj)
	if err != nil {
		return field.ErrorList{field.Invalid(field.NewPath("metadata"), nil, err.Error())}
	}
	return validation.ValidateObjectMetaAccessor(m, true, validation.NameIsDNSSubdomain, field.NewPath("metadata"))
}

func (unstructuredStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	m, err := meta.Accessor(obj)
	if err != nil {
		return field.ErrorList{field.Invalid(field.NewPath("metadata"), nil, err.Error())}
	}
	o, err := meta.Accessor(old)
	if err != nil {
		return field.ErrorList{field.Invalid(field.NewPath("metadata"), nil, err.Error())}
	}
	return validation.ValidateObjectMetaAccessorUpdate(m, o, field.NewPath("metadata"))
}
