package store

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// ObjectName is an object's namespace and name, the structured form of a
// store key (client-go: object-names.go). Its String is the key
// MetaNamespaceKeyFunc gives: "namespace/name", or "name" for a
// cluster-scoped object.
type ObjectName struct {
	Namespace string
	Name      string
}

// NewObjectName returns the ObjectName of namespace and name.
func NewObjectName(namespace, name string) ObjectName {
	return ObjectName{Namespace: namespace, Name: name}
}

// Parts returns the namespace and the name.
func (n ObjectName) Parts() (namespace, name string) { return n.Namespace, n.Name }

// String is the key: "namespace/name", or "name" without a namespace.
func (n ObjectName) String() string {
	if n.Namespace != "" {
		return n.Namespace + "/" + n.Name
	}
	return n.Name
}

// AsNamespacedName is n as a types.NamespacedName.
func (n ObjectName) AsNamespacedName() types.NamespacedName {
	return types.NamespacedName{Namespace: n.Namespace, Name: n.Name}
}

// NamespacedNameAsObjectName is nn as an ObjectName.
func NamespacedNameAsObjectName(nn types.NamespacedName) ObjectName {
	return NewObjectName(nn.Namespace, nn.Name)
}

// ParseObjectName is the inverse of String (SplitMetaNamespaceKey's
// rules and errors).
func ParseObjectName(key string) (ObjectName, error) {
	ns, name, err := SplitMetaNamespaceKey(key)
	return ObjectName{Namespace: ns, Name: name}, err
}

// ObjectToName is obj's ObjectName; an object without metadata is an
// error ("object has no meta").
func ObjectToName(obj any) (ObjectName, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return ObjectName{}, fmt.Errorf("object has no meta: %v", err)
	}
	return MetaObjectToName(m), nil
}

// MetaObjectToName is the ObjectName of an object's metadata.
func MetaObjectToName(m metav1.Object) ObjectName {
	return ObjectName{Namespace: m.GetNamespace(), Name: m.GetName()}
}

// DeletionHandlingObjectToName is ObjectToName that also accepts a
// tombstone, whose key it parses.
func DeletionHandlingObjectToName(obj any) (ObjectName, error) {
	if d, ok := obj.(DeletedFinalStateUnknown); ok {
		return ParseObjectName(d.Key)
	}
	return ObjectToName(obj)
}

// TypedIndexFunc is an IndexFunc for objects of type T.
type TypedIndexFunc[T any] func(obj T) ([]string, error)

// TypedIndexers maps index names to TypedIndexFuncs.
type TypedIndexers[T any] map[string]TypedIndexFunc[T]

// TypedIndexerFuncToIndexerFunc is f as an IndexFunc; it panics (a failed
// type assertion) if given an object that is not a T.
func TypedIndexerFuncToIndexerFunc[T any](f TypedIndexFunc[T]) IndexFunc {
	return func(obj any) ([]string, error) { return f(obj.(T)) }
}

// TypedIndexersToIndexers is every function of indexers as an IndexFunc.
func TypedIndexersToIndexers[T any](indexers TypedIndexers[T]) Indexers {
	out := make(Indexers, len(indexers))
	for name, f := range indexers {
		out[name] = TypedIndexerFuncToIndexerFunc(f)
	}
	return out
}

// TypedIndexer is an Indexer whose objects are all of type T, with
// type-safe variants of Index, ByIndex and AddIndexers (client-go:
// TypedIndexer, as GetTypedIndexer returns it).
type TypedIndexer[T any] struct {
	Indexer
}

// TypedIndex is Index for a T.
func (i TypedIndexer[T]) TypedIndex(indexName string, obj T) ([]T, error) {
	return asTyped[T](i.Index(indexName, obj))
}

// ByTypedIndex is ByIndex, returning Ts.
func (i TypedIndexer[T]) ByTypedIndex(indexName, indexedValue string) ([]T, error) {
	return asTyped[T](i.ByIndex(indexName, indexedValue))
}

// AddTypedIndexers is AddIndexers for TypedIndexFuncs.
func (i TypedIndexer[T]) AddTypedIndexers(indexers TypedIndexers[T]) error {
	return i.AddIndexers(TypedIndexersToIndexers(indexers))
}

// asTyped converts a result as client-go does: nil on an error, else a
// slice of Ts (empty, not nil, for no objects).
func asTyped[T any](objs []any, err error) ([]T, error) {
	if err != nil {
		return nil, err
	}
	out := make([]T, len(objs))
	for i, o := range objs {
		out[i] = o.(T)
	}
	return out, nil
}
