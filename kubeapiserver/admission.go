package kubeapiserver

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
)

// namespaceLifecycle emulates one check of kube-apiserver's
// NamespaceLifecycle admission plugin (k8s.io/apiserver
// admission/plugin/namespace/lifecycle): an object is not created in a
// namespace that does not exist; the create is refused with the 404 the
// plugin gives, `namespaces "x" not found`. It is the only admission the
// server has, and it runs where that plugin runs, as a mutating
// admission plugin in the create handler, before the object is stored.
//
// Where the plugin looks in its informer's cache first and then, for a
// namespace it does not find, waits a moment and asks storage, this one
// asks storage at once (a quorum read of etcd). What it leaves out: there
// is no Terminating namespace here to refuse creates in (a DELETE removes
// a namespace at once), and default, kube-system and kube-public are not
// kept from being deleted.
type namespaceLifecycle struct {
	namespaces *genericregistry.Store
}

var _ admission.MutationInterface = namespaceLifecycle{}

// Handles is true for creates only: the plugin lets updates and deletes
// of objects in any namespace through.
func (namespaceLifecycle) Handles(op admission.Operation) bool { return op == admission.Create }

// Admit refuses a create in a namespace that does not exist. Namespaces
// themselves, and objects of cluster-scoped resources, are let through.
func (l namespaceLifecycle) Admit(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetNamespace() == "" || a.GetResource().GroupResource() == namespacesResource {
		return nil
	}
	_, err := l.namespaces.Get(ctx, a.GetNamespace(), &metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		// The registry names the request's resource in its NotFound;
		// the plugin's names the namespace.
		return apierrors.NewNotFound(namespacesResource, a.GetNamespace())
	case err != nil:
		return apierrors.NewInternalError(err)
	}
	return nil
}

// namespacesResource is the core group's namespaces.
var namespacesResource = schema.GroupResource{Resource: "namespaces"}
