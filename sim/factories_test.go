package sim

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/cachelab/cachelab/factory"
	"github.com/cachelab/cachelab/informer"
)

// A bug planted in cachelab's factory shows in the factory scenarios as a
// divergence from client-go's, in the layer where it shows: a factory
// that makes a new informer for every request (no sharing, I1) in the
// note that says what ForResource returned; a Start that starts only at
// its first call, so a late informer never runs (I2), in the requests.
func TestFactoryPlantsAreReported(t *testing.T) {
	for _, tc := range []struct {
		name, scenario, layer, cmd, diff string
		plant                            func(clFactory) clFactory
	}{
		{"a new informer per request", "factory-shared-informer", "note", "informer shared", "not shared",
			func(f clFactory) clFactory { return &unshared{clFactory: f} }},
		{"Start runs nothing after the first", "factory-late-informer", "state", "factory-start f", "the pods informer runs",
			func(f clFactory) clFactory { return &startOnce{clFactory: f} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A Start that does not run the informer is known once the
			// settle timeout has passed.
			wantDivergence(t, tc.scenario, Options{Seed: 1, factoryPlant: tc.plant, SettleTimeout: 2 * time.Second}, tc.layer, tc.cmd, tc.diff)
		})
	}
}

// unshared makes a new informer for every request after the first.
type unshared struct {
	clFactory
	made bool
}

func (u *unshared) InformerFor(gvr schema.GroupVersionResource, newFunc factory.NewInformerFunc) *informer.SharedIndexInformer {
	if !u.made {
		u.made = true
		return u.clFactory.InformerFor(gvr, newFunc)
	}
	return informer.New(nil, informer.Options{ResyncPeriod: time.Minute})
}

// startOnce starts informers at its first Start only.
type startOnce struct {
	clFactory
	started bool
}

func (s *startOnce) Start(ctx context.Context) {
	if !s.started {
		s.started = true
		s.clFactory.Start(ctx)
	}
}
