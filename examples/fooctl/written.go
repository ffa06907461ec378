package fooctl

import (
	"strconv"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Written remembers the resourceVersion of the controller's own last
// write of each object, so that a reconcile can tell a cache that has
// not yet seen that write: it acts on such a read only to make the same
// write again, from an older version, which the server refuses with
// 409 Conflict (no-stale-writes). The write's own event is on its way,
// and brings the key back; until then there is nothing to do.
//
// resourceVersions are opaque to a client, but one server's (etcd's
// revisions) grow with every write; comparing them is what this
// teaching example does, and what kube-controller-manager avoids with
// its "expectations" (counting the creates and deletes it waits to see).
type Written struct {
	mu sync.Mutex
	rv map[string]int64
}

func key(kind string, obj metav1.Object) string {
	return kind + "/" + obj.GetNamespace() + "/" + obj.GetName()
}

// Note remembers a write's answer: obj as the server stored it.
func (w *Written) Note(kind string, obj metav1.Object) {
	n, err := strconv.ParseInt(obj.GetResourceVersion(), 10, 64)
	if err != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.rv == nil {
		w.rv = map[string]int64{}
	}
	w.rv[key(kind, obj)] = n
}

// Behind reports whether obj, read from the cache, is older than the
// controller's own last write of it.
func (w *Written) Behind(kind string, obj metav1.Object) bool {
	n, err := strconv.ParseInt(obj.GetResourceVersion(), 10, 64)
	if err != nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return n < w.rv[key(kind, obj)]
}
