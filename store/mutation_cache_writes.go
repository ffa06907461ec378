package store

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

// Mutation remembers obj, what a write of it returned, for the TTL,
// under its key (DeletionHandlingMetaNamespaceKeyFunc; an object it
// cannot key is reported to utilruntime's error handlers and ignored).
// A runtime.Object older than the copy already kept is ignored, and so is
// one that the kept tombstone says is deleted: the same resourceVersion,
// or the same UID. Anything else replaces the kept copy (M1, M6).
func (c *mutationCache) Mutation(obj any) {
	c.lock.Lock()
	defer c.lock.Unlock()
	key, err := DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		// A nice-to-have: a write that cannot be remembered is only a
		// slower read later.
		utilruntime.HandleErrorWithLogger(c.logger, err, "DeletionHandlingMetaNamespaceKeyFunc")
		return
	}
	if o, ok := obj.(runtime.Object); ok && c.outdated(key, o) {
		return
	}
	c.mutationCache.Add(key, obj, c.ttl)
}

// outdated reports whether o must not replace the cache's copy for key:
// it is older, or the copy is a tombstone for o's resourceVersion or for
// the object o is a version of (its UID). The lock must be held.
func (c *mutationCache) outdated(key string, o runtime.Object) bool {
	kept, ok := c.mutationCache.Get(key)
	if !ok {
		return false
	}
	keptObj, ok := kept.(runtime.Object)
	if !ok {
		return false
	}
	cmp := c.comparator.CompareResourceVersion(o, keptObj)
	if cmp < 0 {
		return true
	}
	t, isTombstone := kept.(*mutationTombstone)
	if !isTombstone {
		return false
	}
	if cmp == 0 {
		return true
	}
	m, err := meta.Accessor(o)
	return err == nil && m.GetUID() == t.GetUID()
}

// OnAddOrUpdate drops the cache's copy for obj's key when obj (an object
// the informer's store now has) is at least as new: the store answers
// for it from now on. The UIDs are not compared, since resourceVersions
// are comparable across objects of a resource (M5).
func (c *mutationCache) OnAddOrUpdate(obj runtime.Object) {
	key, err := DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleErrorWithLogger(c.logger, err, "DeletionHandlingMetaNamespaceKeyFunc")
		return
	}
	c.lock.Lock()
	defer c.lock.Unlock()
	kept, ok := c.mutationCache.Get(key)
	if !ok {
		return
	}
	if keptObj, ok := kept.(runtime.Object); ok && c.comparator.CompareResourceVersion(obj, keptObj) >= 0 {
		c.mutationCache.Remove(key)
	}
}

// OnDelete replaces the cache's copy for obj's key by a tombstone when
// the informer has seen obj deleted and the copy is of that object (the
// same UID) or older than the deletion. A copy that is neither (a newer
// object of another UID, which the caller may have created after the
// deletion) is kept. With no copy, the tombstone is kept anyway, so that
// a Mutation from before the deletion, arriving late, is ignored. obj
// without metadata is ignored (M6).
func (c *mutationCache) OnDelete(obj runtime.Object) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	key, err := DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleErrorWithLogger(c.logger, err, "DeletionHandlingMetaNamespaceKeyFunc")
		return
	}
	c.lock.Lock()
	defer c.lock.Unlock()
	if kept, ok := c.mutationCache.Get(key); ok {
		if keptObj, ok := kept.(runtime.Object); ok && !c.deletedBy(obj, m, keptObj) {
			return
		}
	}
	c.mutationCache.Add(key, newMutationTombstone(m), c.ttl)
}

// deletedBy reports whether the deletion of obj (whose metadata is m)
// deletes kept too: obj is at least as new, or the same object by UID.
// kept without metadata cannot be judged, and is kept.
func (c *mutationCache) deletedBy(obj runtime.Object, m metav1.Object, kept runtime.Object) bool {
	km, err := meta.Accessor(kept)
	if err != nil {
		return false
	}
	return c.comparator.CompareResourceVersion(obj, kept) >= 0 || km.GetUID() == m.GetUID()
}
