package listwatch

import (
	"context"
	"fmt"
	"net/http"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Values kube-apiserver cannot decode. Something other than
// kube-apiserver wrote them (a tool talking to etcd directly, a bug, a
// disk error), and every reader meets them:
//
//   - a LIST (E12) reads the whole page, then fails with 500
//     StorageReadError naming each such key (up to 100) as a cause; the
//     message carries the first. This is kube-apiserver v1.37's answer,
//     whose AllowUnsafeMalformedObjectDeletion gate (beta, on by
//     default) aggregates the keys instead of failing at the first
//     (k8s.io/apiserver etcd3/corrupt_obj_deleter.go).
//   - a WATCH (E12) that meets one, as an event or among its initial
//     events, sends a 500 InternalError carrying the decoder's error and
//     ends (etcd3/watcher.go transform, sendError); a watch-list's
//     initial events before it have been sent already.
//
// PutRaw and DeleteRaw put such a value in place and take it away.

// maxCorrupt is how many undecodable keys a LIST names before it gives
// up (kube-apiserver's maxCorruptObjErrsToAggregate).
const maxCorrupt = 100

// corruptValue is one stored value that does not decode.
type corruptValue struct {
	key string
	rev int64 // its mod revision
	err error // the decoder's error
}

// errCodeCorruptObj is kube-apiserver's storage error code for a corrupt
// object (storage/errors.go ErrCodeCorruptObj, the seventh code).
const errCodeCorruptObj = 7

// storageError is kube-apiserver's text for one corrupt key (storage
// StorageError with ErrCodeCorruptObj wrapping etcd3's corruptObjectError).
func (c corruptValue) storageError() string {
	return fmt.Sprintf("StorageError: corrupt object, Code: %d, Key: %s, ResourceVersion: 0, AdditionalErrorMsg: object not decodable revision=%d: %v",
		errCodeCorruptObj, c.key, c.rev, c.err)
}

// storageReadError is the 500 a LIST gets for the corrupt values it met
// (etcd3 aggregatedStorageError.NewAPIStatusError).
func (lw *ListerWatcher) storageReadError(bad []corruptValue, tooMany bool) *apierrors.StatusError {
	gr := lw.res.GroupResource()
	causes := make([]metav1.StatusCause, 0, len(bad)+1)
	for _, c := range bad {
		causes = append(causes, metav1.StatusCause{Type: metav1.CauseTypeUnexpectedServerResponse, Field: c.key, Message: c.storageError()})
	}
	if tooMany {
		causes = append(causes, metav1.StatusCause{Type: metav1.CauseTypeTooMany, Message: "too many errors, the list is truncated"})
	}
	msg := fmt.Sprintf("failed to read one or more %s from the storage: %s", gr.String(), bad[0].storageError())
	if len(bad) > 1 {
		msg = fmt.Sprintf("%s (and %d more)", msg, len(bad)-1)
	}
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusInternalServerError, Reason: metav1.StatusReasonStoreReadError,
		Details: &metav1.StatusDetails{Group: gr.Group, Kind: gr.Resource, Name: "list", Causes: causes},
		Message: msg,
	}}
}

// IsStorageReadError reports whether err is a LIST's 500 for values the
// server could not decode (E12).
func IsStorageReadError(err error) bool {
	return apierrors.ReasonForError(err) == metav1.StatusReasonStoreReadError
}

// PutRaw stores value as it is under the key of namespace/name, with no
// checks, as a tool writing to etcd directly would: a value that is not
// an object is what kube-apiserver cannot decode (E12). It returns the
// write's revision.
func (w *Writer) PutRaw(ctx context.Context, namespace, name string, value []byte) (int64, error) {
	resp, err := w.client.Put(ctx, w.res.key(namespace, name), string(value))
	if err != nil {
		return 0, apierrors.NewInternalError(err)
	}
	return resp.Header.Revision, nil
}

// DeleteRaw removes whatever is stored under the key of namespace/name,
// decodable or not, and returns the delete's revision; NotFound if there
// is nothing. (kube-apiserver deletes an undecodable object only when
// asked with ignoreStoreReadErrorWithClusterBreakingPotential.)
func (w *Writer) DeleteRaw(ctx context.Context, namespace, name string) (int64, error) {
	resp, err := w.client.Delete(ctx, w.res.key(namespace, name))
	if err != nil {
		return 0, apierrors.NewInternalError(err)
	}
	if resp.Deleted == 0 {
		return 0, apierrors.NewNotFound(w.res.GroupResource(), name)
	}
	return resp.Header.Revision, nil
}

// ExpiredContinue is what a LIST with opts (which carry a continue token)
// gets once etcd has compacted the revision the token reads at (E4): 410
// Expired with kube-apiserver's "continue parameter is too old" message
// and a token that continues at the latest revision. A bad opts gets the
// error ListWithContext would give. It lets a simulator show an expired
// continuation without a compaction between two pages of one LIST.
func (lw *ListerWatcher) ExpiredContinue(opts metav1.ListOptions) error {
	req, err := lw.parseList(opts)
	if err != nil {
		return err
	}
	if !req.continued {
		return badRequest("ExpiredContinue needs a LIST with a continue token")
	}
	return lw.listError(context.Background(), rpctypes.ErrCompacted, req)
}
