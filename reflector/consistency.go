package reflector

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cachelab/cachelab/consistencydetector"
	"github.com/cachelab/cachelab/store"
)

// checkConsistency is the data consistency detector's check of a
// watch-list (V6), as client-go's reflector makes it
// (reflector_data_consistency_detector.go): only when the process has the
// detector on (KUBE_WATCHLIST_INCONSISTENCY_DETECTOR at its start), after
// the end bookmark and before Replace, so that the store never gets data
// the check refused. It LISTs rv exactly through the reflector's own
// ListerWatcher, transforms what it lists with the store's transform (the
// temporary store's objects were transformed as they came), and compares
// that with the temporary store.
//
// On a difference it panics, on purpose: the round unwinds like any
// panic in it (F8), so Replace never happens, and HandleCrash ends the
// process unless utilruntime.ReallyCrash is false.
//
// The ListOptions are empty, as client-go's are for informers: the
// ListerWatcher adds its own selectors, and the watch-list's options
// (SendInitialEvents, NotOlderThan) are not a LIST's.
func (r *Reflector) checkConsistency(ctx context.Context, rv string, temp *store.Cache) {
	if !consistencydetector.IsDataConsistencyDetectionForWatchListEnabled() {
		return
	}
	r.trace(Event{Step: StepConsistencyCheck, RV: rv, Count: len(temp.List())})
	transform := consistencydetector.TransformFunc(transformerOf(r.store))
	consistencydetector.CheckDataConsistency(ctx, r.name, rv, r.lw.ListWithContext, transform, metav1.ListOptions{}, temp.List)
}
