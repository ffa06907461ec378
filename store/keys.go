package store

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
)

// KeyFunc computes the key under which an object is stored and queued.
// Objects are `any` because that is the shape of client-go's stores, which
// hold typed objects, unstructured ones and tombstones alike.
type KeyFunc func(obj any) (string, error)

// KeyError is returned when a KeyFunc fails for an object. It carries the
// object, so the caller can see which one could not be keyed.
type KeyError struct {
	Obj any
	Err error
}

// Error has the same text as client-go's KeyError, so traces read alike.
func (e KeyError) Error() string {
	return fmt.Sprintf("couldn't create key for object %+v: %v", e.Obj, e.Err)
}

// Unwrap returns the key function's own error.
func (e KeyError) Unwrap() error { return e.Err }

// ExplicitKey is a key that stands for itself: MetaNamespaceKeyFunc returns
// it unchanged. Tests and work queues use it to name an object without one.
type ExplicitKey string

// DeletedFinalStateUnknown is a tombstone: it says "the object with this key
// was deleted, but we did not see the delete happen". A queue produces one
// when a relist no longer contains an object it (or its consumer) still
// knows about. Obj is the last state the queue or the store had seen, and
// may be nil or stale.
//
// It lives in this package, not beside the queues, because the key function
// DeletionHandlingMetaNamespaceKeyFunc must understand it.
type DeletedFinalStateUnknown struct {
	Key string
	Obj any
}

// MetaNamespaceKeyFunc is the default key function: "namespace/name" for a
// namespaced object, "name" for a cluster-scoped one, and an ExplicitKey as
// it is. An object without metadata gets the error "object has no meta".
func MetaNamespaceKeyFunc(obj any) (string, error) {
	if key, ok := obj.(ExplicitKey); ok {
		return string(key), nil
	}
	name, err := ObjectToName(obj)
	if err != nil {
		return "", err
	}
	return name.String(), nil
}

// DeletionHandlingMetaNamespaceKeyFunc is MetaNamespaceKeyFunc that also
// accepts a tombstone and returns the key it carries. Event handlers use it
// in OnDelete, whose argument may be either.
func DeletionHandlingMetaNamespaceKeyFunc(obj any) (string, error) {
	if d, ok := obj.(DeletedFinalStateUnknown); ok {
		return d.Key, nil
	}
	return MetaNamespaceKeyFunc(obj)
}

// SplitMetaNamespaceKey is the inverse of MetaNamespaceKeyFunc: "name" gives
// ("", name), "ns/name" gives (ns, name), anything with more slashes is an
// error. It does not check that the parts are valid names.
func SplitMetaNamespaceKey(key string) (namespace, name string, err error) {
	parts := strings.Split(key, "/")
	switch len(parts) {
	case 1:
		return "", parts[0], nil
	case 2:
		return parts[0], parts[1], nil
	}
	return "", "", fmt.Errorf("unexpected key format: %q", key)
}

// resourceVersionOf returns an object's metadata.resourceVersion, and false
// when the object has no metadata (a tombstone, say).
func resourceVersionOf(obj any) (string, bool) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return "", false
	}
	return m.GetResourceVersion(), true
}
