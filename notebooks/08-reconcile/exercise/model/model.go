// Package model holds the types of chapter 8's lab, shared by your code,
// the reference solution and the checks.
package model

import (
	"context"
	"time"

	"k8s.io/client-go/util/workqueue"

	"github.com/cachelab/cachelab/factory"
	"github.com/cachelab/cachelab/informer"
)

// Result is what a reconcile asks of the loop besides its error: a
// RequeueAfter > 0 asks to reconcile the key again after that long
// (controller-runtime's reconcile.Result, reduced to what the loop reads).
type Result struct {
	RequeueAfter time.Duration
}

// ReconcileFunc makes the world match the object named by key, reading
// it from the cache.
type ReconcileFunc func(ctx context.Context, key string) (Result, error)

// Queue is client-go's rate-limiting workqueue of keys: Get, Done, Add,
// AddAfter, AddRateLimited, Forget, NumRequeues, ShutDown, ...
type Queue = workqueue.TypedRateLimitingInterface[string]

// Wired is what the lab's Wire hands back: each controller's informers,
// from the shared informer factory.
type Wired struct {
	ScalerPods        *informer.SharedIndexInformer
	LabelerPods       *informer.SharedIndexInformer
	LabelerConfigMaps *informer.SharedIndexInformer
}

// WireFunc wires the two controllers' informers from factories made by
// newFactory, and returns once they have synced (or with an error).
type WireFunc func(ctx context.Context, newFactory func() *factory.Factory) (Wired, error)
