package controller

import (
	"context"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	"github.com/cachelab/cachelab/informer"
	"github.com/cachelab/cachelab/store"
)

// handler turns informer events into keys (K1). It does not look at what
// changed: the reconcile reads the cache, so every add, update (resyncs
// included) and delete only says "look at this key again".
type handler struct {
	ctx context.Context
	c   *Controller
}

var _ informer.ResourceEventHandler = handler{}

// OnAdd queues the object's key.
func (h handler) OnAdd(obj any, _ bool) { h.enqueue(obj, "add") }

// OnUpdate queues the new object's key (old and new share it).
func (h handler) OnUpdate(_, newObj any) { h.enqueue(newObj, "update") }

// OnDelete queues the key of the deleted object, or of the tombstone the
// informer made for a delete it only noticed on a relist (P3). The
// reconcile will find the key gone from the cache.
func (h handler) OnDelete(obj any) {
	if _, ok := obj.(store.DeletedFinalStateUnknown); ok {
		h.enqueue(obj, "tombstone")
		return
	}
	h.enqueue(obj, "delete")
}

// enqueue keys obj as DeletionHandlingMetaNamespaceKeyFunc does and adds
// the key. An object without metadata cannot be keyed: it is reported to
// utilruntime.HandleError and dropped, as sample-controller does.
func (h handler) enqueue(obj any, cause string) {
	key, err := store.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleErrorWithContext(h.ctx, err, "controller: cannot key object; dropped", "cause", cause)
		h.c.trace(Event{Kind: Unkeyable, Detail: cause})
		return
	}
	h.c.trace(Event{Kind: Enqueue, Key: key, Detail: cause})
	h.c.queue.Add(key)
}
