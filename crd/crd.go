// Package crd is what kube-apiserver does with a custom resource's
// writes, from its CustomResourceDefinition: apiextensions-apiserver's
// own code, not a copy of it. Compile checks a definition as the server
// checks one it is asked to create (ValidateCustomResourceDefinition)
// and makes its structural schema; Admit then does to an object what
// the server does between a create's or update's request body and
// etcd:
//
//  1. the request's decoder prunes every field the schema does not
//     know (unstructuredSchemaCoercer, customresource_handler.go), and
//     drops the nulls it does not allow;
//  2. its defaulter sets the schema's defaults (unstructuredDefaulter);
//  3. the registry's strategy (pkg/registry/customresource) prepares it
//     (metadata.generation: 1 on create, one more for each update that
//     changes anything but metadata) and validates it against the
//     schema, its x-kubernetes-validations rules included.
//
// The simulator's worlds store the result (package listwatch's Writer),
// and its dry run refuses at a scenario's line what the server would
// refuse (sim/scenario's LinkCustomResources). Package sim/full links it
// in, so the default build compiles none of apiextensions-apiserver; it
// adds 20 packages to the full build, which has the rest (CEL included)
// for the watch cache already.
package crd

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured/unstructuredscheme"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
)

// Definition is a compiled CustomResourceDefinition of one version.
type Definition struct {
	gvk        schema.GroupVersionKind
	structural *structuralschema.Structural
	preserve   bool // spec.preserveUnknownFields: no pruning
	strategy   strategy
	status     strategy // the status subresource's, or nil without one
}

// strategy is what Admit asks of apiextensions-apiserver's registry
// strategy for custom resources (customresource.NewStrategy's, whose
// type it does not export).
type strategy interface {
	PrepareForCreate(ctx context.Context, obj runtime.Object)
	PrepareForUpdate(ctx context.Context, obj, old runtime.Object)
	Validate(ctx context.Context, obj runtime.Object) field.ErrorList
	ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList
}

// Compile reads manifest, a CustomResourceDefinition of
// apiextensions.k8s.io/v1 as JSON, with the defaults kube-apiserver
// gives one, and checks it as kube-apiserver does. It wants one version.
func Compile(manifest []byte) (*Definition, error) {
	var v1 apiextensionsv1.CustomResourceDefinition
	if err := json.Unmarshal(manifest, &v1); err != nil {
		return nil, fmt.Errorf("not a CustomResourceDefinition: %v", err)
	}
	apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(&v1)
	var in apiextensions.CustomResourceDefinition
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(&v1, &in, nil); err != nil {
		return nil, err
	}
	if errs := apiextensionsvalidation.ValidateCustomResourceDefinition(context.Background(), &in); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}, in.Name, errs)
	}
	if len(in.Spec.Versions) != 1 {
		return nil, fmt.Errorf("spec.versions: want one version")
	}
	version := in.Spec.Versions[0]
	// The internal version keeps a schema every version shares at the
	// top (spec.validation), as v1beta1 did.
	props := in.Spec.Validation
	if version.Schema != nil {
		props = version.Schema
	}
	if props == nil || props.OpenAPIV3Schema == nil {
		return nil, fmt.Errorf("spec.versions[0].schema.openAPIV3Schema: a schema is required")
	}
	structural, err := structuralschema.NewStructural(props.OpenAPIV3Schema)
	if err != nil {
		return nil, fmt.Errorf("schema: %v", err)
	}
	validator, _, err := apiservervalidation.NewSchemaValidator(props.OpenAPIV3Schema)
	if err != nil {
		return nil, fmt.Errorf("schema: %v", err)
	}
	gvk := schema.GroupVersionKind{Group: in.Spec.Group, Version: version.Name, Kind: in.Spec.Names.Kind}
	// The status subresource, as apiextensions-apiserver's handler
	// (customresource_handler.go) sets it up: its own validator of the
	// schema's status property, and a strategy for /status.
	sub := in.Spec.Subresources
	if version.Subresources != nil {
		sub = version.Subresources
	}
	var status *apiextensions.CustomResourceSubresourceStatus
	var statusValidator apiservervalidation.SchemaValidator
	if sub != nil && sub.Status != nil {
		status = sub.Status
		if s, ok := props.OpenAPIV3Schema.Properties["status"]; ok {
			if statusValidator, _, err = apiservervalidation.NewSchemaValidator(&s); err != nil {
				return nil, fmt.Errorf("schema of status: %v", err)
			}
		}
	}
	st := customresource.NewStrategy(unstructuredscheme.NewUnstructuredObjectTyper(),
		in.Spec.Scope == apiextensions.NamespaceScoped, gvk, validator, statusValidator, structural, status, nil, nil)
	d := &Definition{gvk: gvk, structural: structural, strategy: st,
		preserve: in.Spec.PreserveUnknownFields != nil && *in.Spec.PreserveUnknownFields}
	if status != nil {
		d.status = customresource.NewStatusStrategy(st)
	}
	return d, nil
}

// HasStatus is whether the resource has the status subresource: then an
// update of the object keeps its stored status, a create drops the one
// it is sent, and only an update of /status (AdmittedStatus) changes it.
func (d *Definition) HasStatus() bool { return d.status != nil }

// Admit does to obj, a create's object (old nil) or an update's (old
// the stored one), what kube-apiserver does before it stores it (the
// package's doc), in place, and returns the server's refusal as kubectl
// prints its 422, or nil.
func (d *Definition) Admit(obj, old map[string]any) error {
	if errs := d.Admitted(obj, old); len(errs) > 0 {
		u := &unstructured.Unstructured{Object: obj}
		return apierrors.NewInvalid(d.gvk.GroupKind(), u.GetName(), errs)
	}
	return nil
}

// Admitted is Admit, its refusal the field errors a registry's strategy
// returns (package kubeapiserver's Options.Admit).
func (d *Definition) Admitted(obj, old map[string]any) field.ErrorList {
	if !d.preserve {
		structuralpruning.Prune(obj, d.structural, true)
		structuraldefaulting.PruneNonNullableNullsWithoutDefaults(obj, d.structural)
	}
	structuraldefaulting.Default(obj, d.structural)
	u := &unstructured.Unstructured{Object: obj}
	ctx := genericapirequest.WithNamespace(context.Background(), u.GetNamespace())
	var errs field.ErrorList
	if old == nil {
		d.strategy.PrepareForCreate(ctx, u)
		errs = d.strategy.Validate(ctx, u)
	} else {
		o := &unstructured.Unstructured{Object: old}
		d.strategy.PrepareForUpdate(ctx, u, o)
		errs = d.strategy.ValidateUpdate(ctx, u, o)
	}
	return errs
}

// AdmittedStatus is what kube-apiserver does to an update of the status
// subresource (a PUT of /status) before it stores it: the request's
// decoder prunes and defaults it as an update's, then the status
// strategy keeps everything of the stored object (old) but its status
// and managedFields, and validates the status against the schema's
// status property. obj is changed in place. It is nil, and changes
// nothing, for a resource without the subresource (HasStatus).
func (d *Definition) AdmittedStatus(obj, old map[string]any) field.ErrorList {
	if d.status == nil {
		return nil
	}
	if !d.preserve {
		structuralpruning.Prune(obj, d.structural, true)
		structuraldefaulting.PruneNonNullableNullsWithoutDefaults(obj, d.structural)
	}
	structuraldefaulting.Default(obj, d.structural)
	u := &unstructured.Unstructured{Object: obj}
	o := &unstructured.Unstructured{Object: old}
	ctx := genericapirequest.WithNamespace(context.Background(), u.GetNamespace())
	d.status.PrepareForUpdate(ctx, u, o)
	// The strategy put a copy of old in u in place of obj: the caller
	// holds obj.
	if u.Object != nil {
		clear(obj)
		maps.Copy(obj, u.Object)
		u.Object = obj
	}
	return d.status.ValidateUpdate(ctx, u, o)
}
