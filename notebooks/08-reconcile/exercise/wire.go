package exercise

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/cachelab/cachelab/factory"
	"github.com/cachelab/cachelab/notebooks/08-reconcile/exercise/model"
)

// Wired is each controller's informers; see the model package.
type Wired = model.Wired

// The resources the two controllers watch.
var (
	Pods       = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	ConfigMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

// Wire gets the informers of two controllers the recipe's way, from the
// shared informer factory (I1-I4): the scaler watches pods; the labeler
// watches pods and configmaps. Make factories with newFactory (each call
// makes a new one), fill in each controller's informers, start them, and
// return once every one of them has synced, or with an error if ctx ends
// first.
//
// The lab counts the requests your wiring sends the server and compares
// them with client-go's factory wired the recipe's way: one watch-list
// per resource, however many controllers watch it.
func Wire(ctx context.Context, newFactory func() *factory.Factory) (Wired, error) {
	// TODO
	return Wired{}, errors.New("not written yet")
}
