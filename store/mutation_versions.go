package store

import (
	"cmp"
	"strconv"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// integerVersions compares resourceVersions as unsigned 64-bit integers,
// "" counting as 0 and "007" as 7 (client-go: etcdObjectVersioner). A
// resourceVersion that is not an integer (or an object without metadata)
// is a programming error: it panics with strconv's or meta's error (M7). KEP-5504's CompareResourceVersion (controller/, K6) differs: it
// compares by length, then as strings, and refuses leading zeros and "".
type integerVersions struct{}

var _ ResourceVersionComparator = integerVersions{}

// CompareResourceVersion returns -1, 0 or 1 as lhs's resourceVersion is
// smaller than, equal to or larger than rhs's. It panics if either cannot
// be read as an integer.
func (integerVersions) CompareResourceVersion(lhs, rhs runtime.Object) int {
	return cmp.Compare(mustIntegerVersion(lhs), mustIntegerVersion(rhs))
}

func mustIntegerVersion(obj runtime.Object) uint64 {
	v, err := integerVersion(obj)
	if err != nil {
		panic(err) // as client-go: the caller promised integer versions
	}
	return v
}

// integerVersion reads obj's resourceVersion as an integer.
func integerVersion(obj runtime.Object) (uint64, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return 0, err
	}
	rv := m.GetResourceVersion()
	if rv == "" {
		return 0, nil
	}
	return strconv.ParseUint(rv, 10, 64)
}

// mutationTombstone stands in the cache for an object the informer saw
// deleted: its namespace, name, UID and the resourceVersion of the
// deletion, so that Mutation can tell a write from before the deletion
// (M6). GetByKey and ByIndex never answer with one, except where
// client-go does too: a store's object older than the deletion (which an
// informer's store cannot have) is not newer than it.
//
// client-go's tombstone implements metav1.Object by hand, panicking in
// every method but those four; embedding ObjectMeta says the same in a
// line, and answers the others with zero values instead of panicking.
type mutationTombstone struct {
	metav1.ObjectMeta
}

var _ runtime.Object = (*mutationTombstone)(nil)

func newMutationTombstone(m metav1.Object) *mutationTombstone {
	return &mutationTombstone{metav1.ObjectMeta{
		Namespace: m.GetNamespace(), Name: m.GetName(), UID: m.GetUID(), ResourceVersion: m.GetResourceVersion(),
	}}
}

// GetObjectKind: a tombstone has no kind.
func (t *mutationTombstone) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// DeepCopyObject copies the tombstone.
func (t *mutationTombstone) DeepCopyObject() runtime.Object {
	c := *t
	return &c
}
