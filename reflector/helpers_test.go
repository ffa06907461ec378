package reflector_test

import (
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

func watchEvent(typ string, obj runtime.Object) watch.Event {
	return watch.Event{Type: watch.EventType(typ), Object: obj}
}

// table is a kubectl Table object, which a reflector must drop.
func table() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("meta.k8s.io/v1")
	u.SetKind("Table")
	u.SetResourceVersion("50")
	return u
}

func errString(s string) error { return errors.New(s) }

// tooLarge is kube-apiserver's answer to a future resourceVersion.
func tooLarge() error {
	err := apierrors.NewTimeoutError("Too large resource version: 99, current: 2", 1)
	err.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: metav1.CauseTypeResourceVersionTooLarge, Message: "Too large resource version"}}
	return err
}
