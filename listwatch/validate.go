package listwatch

import (
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	"k8s.io/apimachinery/pkg/apis/meta/internalversion/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// parseOptions reads a LIST's or WATCH's options as kube-apiserver's
// handler does before anything reaches storage (endpoints/handlers/get.go
// listOpts), in its order, so that a request with several faults gets
// the same first error:
//
//  1. decode: a selector that does not parse is 400 BadRequest in the
//     parser's own words;
//  2. default: with the WatchList feature on, a WATCH at resourceVersion
//     "" or "0" that says nothing about initial events or matching is
//     made a watch-list (SendInitialEvents, NotOlderThan), so with
//     bookmarks allowed it ends its initial events with the
//     initial-events-end bookmark (E6, E9);
//  3. validate with apimachinery's ValidateListOptions: 422 Invalid on
//     the kind ListOptions.meta.k8s.io (E11); the server's WatchList
//     feature decides whether a watch may ask for initial events;
//  4. field labels: every resource supports metadata.name and
//     metadata.namespace, in apimachinery's words for any other (400),
//     as for a custom resource.
func parseOptions(opts metav1.ListOptions, isWatch, watchList bool) (metainternalversion.ListOptions, filter, error) {
	var in metainternalversion.ListOptions
	opts.Watch = isWatch
	if err := metainternalversion.Convert_v1_ListOptions_To_internalversion_ListOptions(&opts, &in, nil); err != nil {
		return in, filter{}, apierrors.NewBadRequest(err.Error())
	}
	metainternalversion.SetListOptionsDefaults(&in, watchList)
	if errs := validation.ValidateListOptions(&in, watchList); len(errs) > 0 {
		return in, filter{}, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "ListOptions"}, "", errs)
	}
	f := filter{labels: labels.Everything(), fields: fields.Everything()}
	if in.LabelSelector != nil {
		f.labels = in.LabelSelector
	}
	if in.FieldSelector != nil {
		fs, err := in.FieldSelector.Transform(runtime.DefaultMetaV1FieldSelectorConversion)
		if err != nil {
			return in, filter{}, apierrors.NewBadRequest(err.Error())
		}
		f.fields = fs
	}
	return in, f, nil
}

// serverFeatures are the kube-apiserver feature gates a ListerWatcher
// plays, changeable while it serves (a simulator's lever).
type serverFeatures struct {
	watchListOff atomic.Bool
}

// SetWatchListFeature turns the served WatchList feature on or off: off,
// a WATCH that asks for initial events is refused with 422, as by a
// kube-apiserver whose WatchList feature gate is off (E11), and clients
// fall back to LIST then WATCH. It is on unless Options.WatchListOff.
func (lw *ListerWatcher) SetWatchListFeature(on bool) { lw.features.watchListOff.Store(!on) }

// WatchListFeature reports whether the served WatchList feature is on.
func (lw *ListerWatcher) WatchListFeature() bool { return !lw.features.watchListOff.Load() }
