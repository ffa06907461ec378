package listwatch

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kube-apiserver's texts (k8s.io/apiserver/pkg/storage/etcd3/errors.go).
const (
	expiredList  = "The resourceVersion for the provided list is too old."
	expiredWatch = "The resourceVersion for the provided watch is too old."
	// inconsistentContinue is the 410 for a continue token whose revision
	// was compacted; the error carries a token that continues at the latest
	// revision instead.
	inconsistentContinue = "The provided continue parameter is too old to display a consistent list result. " +
		"You can start a new list without the continue parameter, or use the continue token in this response " +
		"to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent " +
		"list - objects that were created, modified, or deleted between the time the first chunk was returned " +
		"and now may show up in the list."
)

// tooLargeResourceVersion is the 504 kube-apiserver returns for a
// resourceVersion newer than anything it has (E3): reflectors recognise it
// by its cause and retry with resourceVersion "".
func tooLargeResourceVersion(asked, current int64, retrySeconds int) *apierrors.StatusError {
	err := apierrors.NewTimeoutError(fmt.Sprintf("Too large resource version: %d, current: %d", asked, current), retrySeconds)
	err.ErrStatus.Details.Causes = []metav1.StatusCause{{
		Type:    metav1.CauseTypeResourceVersionTooLarge,
		Message: "Too large resource version",
	}}
	return err
}

// badRequest is a 400 with a message that says what was wrong.
func badRequest(format string, args ...any) *apierrors.StatusError {
	return apierrors.NewBadRequest(fmt.Sprintf(format, args...))
}
