package sim

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured/unstructuredscheme"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"sigs.k8s.io/yaml"

	"github.com/cachelab/cachelab/crd"
	"github.com/cachelab/cachelab/internal/etcdoracle"
	"github.com/cachelab/cachelab/listwatch"
)

// TestDiffE20CustomResourceWrites: a custom resource's life through the
// simulator's writer (listwatch's Writer behind package crd's Admit, as
// a run writes one: admitting, customres.go) and through
// apiextensions-apiserver's own REST storage for custom resources
// (customresource.NewStorage: the generic registry with the custom
// resource strategy), over one etcd. The oracle's requests are decoded
// as kube-apiserver's handler decodes a body (prune, then default: the
// unstructuredSchemaCoercer and unstructuredDefaulter of
// customresource_handler.go, called here by the test). Each step's
// answer (the object, or the error's code and message) is compared with
// go-cmp, leaving out what differs by construction: uid,
// creationTimestamp, deletionTimestamp's value and resourceVersion.
// (E20, E18)
func TestDiffE20CustomResourceWrites(t *testing.T) {
	t.Parallel()
	ctx := request.WithNamespace(context.Background(), "ns0")
	js, err := yaml.YAMLToJSON([]byte(diffFooCRD))
	if err != nil {
		t.Fatal(err)
	}
	e := etcdoracle.Start(t)
	res := listwatch.Resource{Group: "example.com", Version: "v1", Resource: "foos", Kind: "Foo", Namespaced: true, Store: "example.com/foos"}
	d, err := crd.Compile(js)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	w := listwatch.NewWriter(e.Client(), res, listwatch.WriterOptions{
		NewUID: func() types.UID { n++; return types.UID(fmt.Sprintf("uid-%d", n)) },
		Now:    func() time.Time { return epoch },
	})
	ours := admitting{w, d.Admit}
	theirs, decode := oracleCustomResource(t, e, js)

	type answer struct {
		Obj  map[string]any
		Code int32
		Msg  string
		// Wrote: an update's answer has another resourceVersion than
		// the one stored before it (kube-apiserver writes nothing for
		// an update that changes nothing, E2).
		Wrote bool
	}
	summarize := func(obj *unstructured.Unstructured, err error) answer {
		if err != nil {
			var st apierrors.APIStatus
			if !errors.As(err, &st) {
				t.Fatalf("not an API error: %v", err)
			}
			return answer{Code: st.Status().Code, Msg: st.Status().Message}
		}
		c := obj.DeepCopy()
		c.SetUID("")
		c.SetResourceVersion("")
		c.SetCreationTimestamp(metav1.Time{})
		if c.GetDeletionTimestamp() != nil {
			c.SetDeletionTimestamp(&metav1.Time{Time: epoch})
		}
		return answer{Obj: c.Object}
	}
	fooWith := func(spec map[string]any, finalizers ...string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Foo",
			"metadata": map[string]any{"namespace": "ns0", "name": "f"}, "spec": spec}}
		u.SetFinalizers(finalizers)
		return u
	}
	// edit is an update made from what each side stores.
	type edit func(u *unstructured.Unstructured)
	steps := []struct {
		name   string
		create *unstructured.Unstructured
		update edit
		delete bool
	}{
		{name: "create: size pruned, replicas defaulted, generation 1",
			create: fooWith(map[string]any{"color": "blue", "size": "large"}, "example.com/cleanup")},
		{name: "create again: 409", create: fooWith(map[string]any{"color": "blue"})},
		{name: "update the spec: generation 2", update: func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, int64(3), "spec", "replicas")
		}},
		{name: "update a label only: generation kept", update: func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"a": "b"}) }},
		{name: "update refused by the schema: 422", update: func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, int64(-1), "spec", "replicas")
		}},
		{name: "update with a field the schema does not know: pruned, no change", update: func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, "x", "spec", "size")
		}},
		{name: "delete: marked, generation raised", delete: true},
		{name: "delete again: nothing changes", delete: true},
		{name: "update taking the finalizer away: deleted", update: func(u *unstructured.Unstructured) { u.SetFinalizers(nil) }},
		{name: "delete, gone: 404", delete: true},
	}
	for _, st := range steps {
		var a, b answer
		switch {
		case st.create != nil:
			a = summarize(ours.Create(ctx, st.create.DeepCopy()))
			b = summarize(theirs.create(ctx, decode(st.create.DeepCopy())))
		case st.delete:
			a = summarize(ours.Delete(ctx, "ns0", "f", listwatch.Preconditions{}))
			b = summarize(theirs.delete(ctx, "f"))
		default:
			mine, err := w.Get(ctx, "ns0", "f")
			if err != nil {
				t.Fatalf("%s: %v", st.name, err)
			}
			before := mine.GetResourceVersion()
			st.update(mine)
			out, err := ours.Update(ctx, mine)
			a = summarize(out, err)
			a.Wrote = err == nil && out.GetResourceVersion() != before
			stored, err := theirs.get(ctx, "f")
			if err != nil {
				t.Fatalf("%s: the oracle: %v", st.name, err)
			}
			before = stored.GetResourceVersion()
			st.update(stored)
			out, err = theirs.update(ctx, decode(stored))
			b = summarize(out, err)
			b.Wrote = err == nil && out.GetResourceVersion() != before
		}
		if diff := cmp.Diff(b, a); diff != "" {
			t.Errorf("%s: the simulator's writer differs from apiextensions-apiserver's storage (-apiextensions +simulator):\n%s", st.name, diff)
		}
	}
}

// diffFooCRD is a Foo whose spec.replicas is an integer of at least 0,
// 1 by default.
const diffFooCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: foos.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: foos, singular: foo, kind: Foo}
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
              replicas: {type: integer, minimum: 0, default: 1}
              color: {type: string}
`

// crStorage is apiextensions-apiserver's storage of one custom resource.
type crStorage struct{ store *genericregistry.Store }

func (s crStorage) create(ctx context.Context, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	return asUnstructured(s.store.Create(ctx, u, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}))
}

func (s crStorage) get(ctx context.Context, name string) (*unstructured.Unstructured, error) {
	return asUnstructured(s.store.Get(ctx, name, &metav1.GetOptions{}))
}

func (s crStorage) update(ctx context.Context, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	obj, _, err := s.store.Update(ctx, u.GetName(), rest.DefaultUpdatedObjectInfo(u), rest.ValidateAllObjectFunc,
		rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	out, err := asUnstructured(obj, err)
	if err == nil && out.GetDeletionTimestamp() != nil && len(out.GetFinalizers()) == 0 {
		// The registry deleted it: the Writer answers with the
		// object as asked for, which is what this is.
		return out, nil
	}
	return out, err
}

func (s crStorage) delete(ctx context.Context, name string) (*unstructured.Unstructured, error) {
	obj, _, err := s.store.Delete(ctx, name, rest.ValidateAllObjectFunc, &metav1.DeleteOptions{})
	return asUnstructured(obj, err)
}

func asUnstructured(obj any, err error) (*unstructured.Unstructured, error) {
	if err != nil {
		return nil, err
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("the storage answered with a %T", obj)
	}
	return u, nil
}

// oracleCustomResource is apiextensions-apiserver's storage of the
// definition manifest (JSON) over e, under /oracle, and the decoding
// kube-apiserver's handler gives a request body of it.
func oracleCustomResource(t *testing.T, e *listwatch.Embedded, manifest []byte) (crStorage, func(*unstructured.Unstructured) *unstructured.Unstructured) {
	t.Helper()
	var v1 apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(manifest, &v1); err != nil {
		t.Fatal(err)
	}
	apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(&v1)
	var in apiextensions.CustomResourceDefinition
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(&v1, &in, nil); err != nil {
		t.Fatal(err)
	}
	props := in.Spec.Validation.OpenAPIV3Schema
	structural, err := structuralschema.NewStructural(props)
	if err != nil {
		t.Fatal(err)
	}
	validator, _, err := apiservervalidation.NewSchemaValidator(props)
	if err != nil {
		t.Fatal(err)
	}
	gvk := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Foo"}
	gr := schema.GroupResource{Group: "example.com", Resource: "foos"}
	cfg := etcdoracle.Config(t, e, "/oracle")
	opts := generic.RESTOptions{StorageConfig: cfg.ForResource(gr), Decorator: generic.UndecoratedStorage,
		EnableGarbageCollection: true, DeleteCollectionWorkers: 1, ResourcePrefix: "/example.com/foos"}
	strategy := customresource.NewStrategy(unstructuredscheme.NewUnstructuredObjectTyper(), true, gvk, validator, nil, structural, nil, nil, nil)
	st, err := customresource.NewStorage(gr, schema.GroupResource{Group: "example.com", Resource: "foo"}, gvk,
		gvk.GroupVersion().WithKind("FooList"), strategy, opts, nil, rest.NewDefaultTableConvertor(gr), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.CustomResource.Store.DestroyFunc)
	decode := func(u *unstructured.Unstructured) *unstructured.Unstructured {
		structuralpruning.Prune(u.Object, structural, true)
		structuraldefaulting.PruneNonNullableNullsWithoutDefaults(u.Object, structural)
		structuraldefaulting.Default(u.Object, structural)
		return u
	}
	return crStorage{st.CustomResource.Store}, decode
}
