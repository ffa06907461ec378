package listwatch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
)

// OptimisticLockErrorMsg is kube-apiserver's text for a failed
// resourceVersion (or UID) precondition.
const OptimisticLockErrorMsg = "the object has been modified; please apply your changes to the latest version and try again"

// WriterOptions configures a Writer. Zero values mean random UIDs and the
// wall clock; a simulator sets both to make its runs repeatable.
type WriterOptions struct {
	NewUID func() types.UID
	Now    func() time.Time
}

// Writer creates, updates and deletes objects of one resource in etcd with
// kube-apiserver's optimistic concurrency (E2).
type Writer struct {
	client KV
	res    Resource
	newUID func() types.UID
	now    func() time.Time
}

// NewWriter returns a Writer for res that writes through client: a
// connection, or an embedded etcd's LocalKV.
func NewWriter(client KV, res Resource, opts WriterOptions) *Writer {
	w := &Writer{client: client, res: res, newUID: opts.NewUID, now: opts.Now}
	if w.newUID == nil {
		w.newUID = uuid.NewUUID
	}
	if w.now == nil {
		w.now = time.Now
	}
	return w
}

// Get reads one object at the latest revision.
func (w *Writer) Get(ctx context.Context, namespace, name string) (*unstructured.Unstructured, error) {
	key := w.res.key(namespace, name)
	resp, err := w.client.Get(ctx, key)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if len(resp.Kvs) == 0 {
		return nil, apierrors.NewNotFound(w.res.GroupResource(), name)
	}
	kv := resp.Kvs[0]
	obj, err := decode(key, kv.Value, kv.ModRevision)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return obj, nil
}

// Create stores a new object, setting its uid and creationTimestamp. It
// fails with AlreadyExists if the key exists, and refuses an object that
// carries a resourceVersion. Whatever deletionTimestamp,
// deletionGracePeriodSeconds or selfLink the object carries is dropped,
// as kube-apiserver's create handler wipes them (E18): no object is
// created being deleted.
func (w *Writer) Create(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if err := w.res.checkObject(obj); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if obj.GetResourceVersion() != "" {
		return nil, apierrors.NewBadRequest("resourceVersion should not be set on objects to be created")
	}
	obj = obj.DeepCopy()
	wipeSystemFields(obj)
	obj.SetUID(w.newUID())
	obj.SetCreationTimestamp(metav1.NewTime(w.now()))
	value, err := encode(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	key := w.res.key(obj.GetNamespace(), obj.GetName())
	resp, err := w.client.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, string(value))).
		Commit()
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if !resp.Succeeded {
		return nil, apierrors.NewAlreadyExists(w.res.GroupResource(), obj.GetName())
	}
	obj.SetResourceVersion(strconv.FormatInt(resp.Header.Revision, 10))
	return obj, nil
}

// Update replaces an object. If obj carries a resourceVersion it is a
// precondition: the update fails with Conflict unless the stored object is
// still at that version. Without one, the update applies to whatever is
// stored, retrying if a concurrent write slips in between. uid and
// creationTimestamp are kept from the stored object. An update that
// changes nothing writes nothing and returns the stored object (E2).
//
// An object being deleted (E18) keeps its deletionTimestamp, and its
// deletionGracePeriodSeconds where the update leaves it out; an update
// may neither change them nor set them on an object that is not being
// deleted, nor add finalizers to one that is (422 Invalid). An update
// that leaves an object being deleted no finalizers deletes it instead,
// as kube-apiserver's registry does: the result is the object as the
// update asked for it, without a new resourceVersion (Finalized says
// so), and the key is gone.
func (w *Writer) Update(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if err := w.res.checkObject(obj); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	want, err := parseRV(obj.GetResourceVersion())
	if err != nil {
		return nil, err
	}
	key := w.res.key(obj.GetNamespace(), obj.GetName())
	for {
		current, modRev, err := w.read(ctx, key, obj.GetName())
		if err != nil {
			return nil, err
		}
		if want != 0 && want != modRev {
			return nil, w.conflict(obj.GetName())
		}
		next := obj.DeepCopy()
		next.SetUID(current.GetUID())
		next.SetCreationTimestamp(current.GetCreationTimestamp())
		keepDeletion(next, current)
		if errs := deletionUpdateErrors(next, current); len(errs) > 0 {
			return nil, apierrors.NewInvalid(w.res.GroupVersionKind().GroupKind(), next.GetName(), errs)
		}
		if finalizedBy(next, current) {
			gone, err := w.deleteAt(ctx, key, modRev)
			if err != nil || gone {
				next.SetResourceVersion(current.GetResourceVersion())
				return next, err
			}
			continue // written in between: read it again
		}
		done, err := w.putIfUnchanged(ctx, key, modRev, current, next)
		if err != nil || done != nil {
			return done, err
		}
		// Someone wrote in between: re-read and try again (only reachable
		// without a precondition, or the next read reports the conflict).
	}
}

// putIfUnchanged writes next if the key is still at modRev. It returns the
// stored result, or nil (and no error) if the key moved meanwhile.
func (w *Writer) putIfUnchanged(ctx context.Context, key string, modRev int64, current, next *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	value, err := encode(next)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if old, _ := encode(current); bytes.Equal(old, value) {
		return current, nil // nothing changed: no write, no new resourceVersion
	}
	resp, err := w.client.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(key), "=", modRev)).
		Then(clientv3.OpPut(key, string(value))).
		Commit()
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if !resp.Succeeded {
		return nil, nil
	}
	next.SetResourceVersion(strconv.FormatInt(resp.Header.Revision, 10))
	return next, nil
}

// Preconditions make a Delete conditional, as metav1.Preconditions do.
type Preconditions struct {
	UID             *types.UID
	ResourceVersion *string
}

// Delete removes an object and returns its last state. A precondition that
// no longer holds fails with Conflict, in the words of kube-apiserver's
// rest.BeforeDelete (which precondition, and both values); a missing
// object with NotFound.
//
// An object with finalizers is not removed (E18): as kube-apiserver's
// registry, Delete marks it as being deleted (deletionTimestamp now,
// deletionGracePeriodSeconds 0), stores that, and returns it; the
// finalizers' owners see the update and remove their names, and the
// update that removes the last one deletes it (Update). A second Delete
// of an object being deleted changes nothing and returns it.
func (w *Writer) Delete(ctx context.Context, namespace, name string, pre Preconditions) (*unstructured.Unstructured, error) {
	key := w.res.key(namespace, name)
	for {
		current, modRev, err := w.read(ctx, key, name)
		if err != nil {
			return nil, err
		}
		if err := w.checkDelete(pre, current); err != nil {
			return nil, err
		}
		if len(current.GetFinalizers()) > 0 {
			next := current.DeepCopy()
			markAsDeleting(next, w.now())
			done, err := w.putIfUnchanged(ctx, key, modRev, current, next)
			if err != nil || done != nil {
				return done, err
			}
			continue // written in between: read it again
		}
		gone, err := w.deleteAt(ctx, key, modRev)
		if err != nil {
			return nil, err
		}
		if gone {
			return current, nil
		}
	}
}

// deleteAt removes key if it is still at modRev; false if it moved.
func (w *Writer) deleteAt(ctx context.Context, key string, modRev int64) (bool, error) {
	resp, err := w.client.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(key), "=", modRev)).
		Then(clientv3.OpDelete(key)).
		Commit()
	if err != nil {
		return false, apierrors.NewInternalError(err)
	}
	return resp.Succeeded, nil
}

// read returns the stored object under key and its mod revision, or
// NotFound.
func (w *Writer) read(ctx context.Context, key, name string) (*unstructured.Unstructured, int64, error) {
	resp, err := w.client.Get(ctx, key)
	if err != nil {
		return nil, 0, apierrors.NewInternalError(err)
	}
	if len(resp.Kvs) == 0 {
		return nil, 0, apierrors.NewNotFound(w.res.GroupResource(), name)
	}
	kv := resp.Kvs[0]
	obj, err := decode(key, kv.Value, kv.ModRevision)
	if err != nil {
		return nil, 0, apierrors.NewInternalError(err)
	}
	return obj, kv.ModRevision, nil
}

// ConflictError is the error Update returns when its precondition fails:
// kube-apiserver's 409 Conflict for the named object. A caller that
// decides a write before making it (a simulator) says the same.
func (w *Writer) ConflictError(name string) error { return w.conflict(name) }

func (w *Writer) conflict(name string) error {
	return apierrors.NewConflict(w.res.GroupResource(), name, errors.New(OptimisticLockErrorMsg))
}

// parseRV parses a resourceVersion precondition ("" means none).
func parseRV(rv string) (int64, error) {
	if rv == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(rv, 10, 64)
	if err != nil || n <= 0 {
		return 0, apierrors.NewBadRequest(fmt.Sprintf("invalid resource version: %q", rv))
	}
	return n, nil
}
