package solution

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/cachelab/cachelab/factory"
	"github.com/cachelab/cachelab/notebooks/08-reconcile/exercise/model"
)

var (
	pods       = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

// Wire asks one factory for every informer first, then starts it once
// and waits for them all: two controllers on pods share one informer, so
// the server sees one watch-list per resource.
func Wire(ctx context.Context, newFactory func() *factory.Factory) (model.Wired, error) {
	f := newFactory()
	w := model.Wired{
		ScalerPods:        f.ForResource(pods).Informer(),
		LabelerPods:       f.ForResource(pods).Informer(),
		LabelerConfigMaps: f.ForResource(configMaps).Informer(),
	}
	f.Start(ctx)
	for gvr, ok := range f.WaitForCacheSync(ctx) {
		if !ok {
			return w, fmt.Errorf("%s did not sync: %w", gvr.Resource, context.Cause(ctx))
		}
	}
	return w, nil
}
