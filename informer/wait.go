package informer

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// InformerSynced is a HasSynced function: an informer's, or a
// registration's.
type InformerSynced func() bool

// syncedPollPeriod is how often WaitForCacheSync asks, as in client-go.
const syncedPollPeriod = 100 * time.Millisecond

// WaitForCacheSync waits until every synced function reports true, asking
// at once and then every 100 ms of c (the real clock if nil). It returns
// false if ctx ends first. Controllers call it before they start workers,
// so that they never act on a half-filled cache.
func WaitForCacheSync(ctx context.Context, c clock.Clock, synced ...InformerSynced) bool {
	if c == nil {
		c = clock.RealClock{}
	}
	for {
		if allSynced(synced) {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-c.After(syncedPollPeriod):
		}
	}
}

func allSynced(synced []InformerSynced) bool {
	for _, f := range synced {
		if !f() {
			return false
		}
	}
	return true
}

// WaitForNamedCacheSync is WaitForCacheSync with log lines saying who
// waits: "Waiting for caches to sync" then "Caches are synced" (with
// controller=controllerName) through klog.Background(), or, if ctx ends
// first, the error "Unable to sync caches" through
// utilruntime.HandleErrorWithContext (P21). client-go's takes a stop
// channel where this takes ctx and the clock to poll on.
func WaitForNamedCacheSync(ctx context.Context, c clock.Clock, controllerName string, synced ...InformerSynced) bool {
	logger := klog.Background()
	logger.Info("Waiting for caches to sync", "controller", controllerName)
	if !WaitForCacheSync(ctx, c, synced...) {
		utilruntime.HandleErrorWithContext(context.Background(), nil, "Unable to sync caches", "controller", controllerName)
		return false
	}
	logger.Info("Caches are synced", "controller", controllerName)
	return true
}

// WaitForNamedCacheSyncWithContext is WaitForNamedCacheSync for code that
// logs contextually: the lines go to ctx's logger, without a controller
// key (the logger's name and values say who waits), and the error is
// handled with ctx (P21).
func WaitForNamedCacheSyncWithContext(ctx context.Context, c clock.Clock, synced ...InformerSynced) bool {
	logger := klog.FromContext(ctx)
	logger.Info("Waiting for caches to sync")
	if !WaitForCacheSync(ctx, c, synced...) {
		utilruntime.HandleErrorWithContext(ctx, nil, "Unable to sync caches")
		return false
	}
	logger.Info("Caches are synced")
	return true
}

// SyncResult sums up a wait for several informers' caches: which synced,
// and, if not all did, why the wait stopped (context.Cause of its
// context). client-go's shared informer factories return it from
// WaitForCacheSyncWithContext (P21).
type SyncResult struct {
	// Err is nil if every cache synced.
	Err error
	// Synced maps each informer's object type to whether it synced.
	Synced map[reflect.Type]bool
}

// AsError is nil if every cache synced; otherwise an error that names the
// types that did not, sorted, and wraps Err.
func (r SyncResult) AsError() error {
	if r.Err == nil {
		return nil
	}
	var unsynced []string
	for t, ok := range r.Synced {
		if !ok {
			unsynced = append(unsynced, t.String())
		}
	}
	slices.Sort(unsynced)
	return fmt.Errorf("failed to sync all caches: %s: %w", strings.Join(unsynced, ", "), r.Err)
}
