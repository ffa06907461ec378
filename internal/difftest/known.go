package difftest

import (
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cachelab/cachelab/store"
)

// Known is a KnownObjects (a consumer's cache, as a queue sees it) with a
// deterministic ListKeys: sorted. Each side of a differential test gets its
// own Known, and the harness updates both the same way, as an informer
// updates its indexer from what it pops.
type Known struct {
	objs map[string]any
}

// NewKnown returns an empty Known.
func NewKnown() *Known { return &Known{objs: map[string]any{}} }

// ListKeys returns the keys, sorted.
func (k *Known) ListKeys() []string {
	out := make([]string, 0, len(k.objs))
	for key := range k.objs {
		out = append(out, key)
	}
	sort.Strings(out)
	return out
}

// GetByKey returns the object under key. It fails for an object labelled
// LabelLookupFails and reports one labelled LabelLookupMissing as not
// there, to exercise the queues' lookup-error paths.
func (k *Known) GetByKey(key string) (any, bool, error) {
	obj, ok := k.objs[key]
	if u, isObj := obj.(*unstructured.Unstructured); isObj {
		if _, fail := u.GetLabels()[LabelLookupFails]; fail {
			return nil, false, fmt.Errorf("lookup of %q refused", key)
		}
		if _, gone := u.GetLabels()[LabelLookupMissing]; gone {
			return nil, false, nil
		}
	}
	return obj, ok, nil
}

// Set stores obj under its key (tombstones under theirs).
func (k *Known) Set(obj any) {
	if key, err := store.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
		k.objs[key] = obj
	}
}

// Remove deletes obj's key.
func (k *Known) Remove(obj any) {
	if key, err := store.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
		delete(k.objs, key)
	}
}

// Apply updates the cache from one popped delta, as an informer does:
// Deleted removes, every other single-object type stores.
func (k *Known) Apply(d D) {
	switch d.Type {
	case "Deleted":
		if t, ok := d.Object.(Tombstone); ok {
			delete(k.objs, t.Key)
			return
		}
		k.Remove(d.Object)
	case "Added", "Updated", "Sync", "Replaced":
		k.Set(d.Object)
	}
}
