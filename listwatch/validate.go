package listwatch

import (
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	"k8s.io/apimachinery/pkg/apis/meta/internalversion/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// validate checks a LIST's or WATCH's options as kube-apiserver does
// before it reads anything (E11): with apimachinery's ValidateListOptions,
// and a failure is 422 Invalid on the kind ListOptions.meta.k8s.io. The
// server's WatchList feature decides whether a watch may ask for initial
// events (sendInitialEvents).
func validate(opts metav1.ListOptions, isWatch, watchList bool) error {
	in := metainternalversion.ListOptions{
		ResourceVersion:      opts.ResourceVersion,
		ResourceVersionMatch: opts.ResourceVersionMatch,
		Continue:             opts.Continue,
		SendInitialEvents:    opts.SendInitialEvents,
		Watch:                isWatch,
	}
	if errs := validation.ValidateListOptions(&in, watchList); len(errs) > 0 {
		return apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "ListOptions"}, "", errs)
	}
	return nil
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
