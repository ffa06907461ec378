package informer_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/cachelab/cachelab/informer"
	dt "github.com/cachelab/cachelab/internal/difftest"
)

// client-go: shared_informer.go WaitForNamedCacheSync,
// WaitForNamedCacheSyncWithContext (P21): the same result and the same
// log lines and handled errors, when the caches sync (after 250 ms, so
// the wait polls) and when the context ends first.
func TestWaitForNamedCacheSync(t *testing.T) {
	// Errors go to a recorder: in a synctest bubble client-go's default
	// handler's rate limiter, primed with real time at init, would sleep
	// for decades of fake time.
	handled := &dt.Log{}
	saved := utilruntime.ErrorHandlers
	utilruntime.ErrorHandlers = []utilruntime.ErrorHandler{func(_ context.Context, err error, msg string, kv ...any) {
		handled.Add("error %v %q %v @%s", err, msg, kv, dt.HandledSite())
	}}
	t.Cleanup(func() { utilruntime.ErrorHandlers = saved })
	// WaitForNamedCacheSync logs through klog.Background(), the global
	// logger: it is replaced for the test.
	global := &dt.Log{}
	klog.SetLogger(dt.InfoLogger(global))
	t.Cleanup(klog.ClearLogger)

	type outcome struct {
		Named, NamedCtx, NamedGivesUp, NamedCtxGivesUp bool
		Polls                                          int // calls of the synced functions: at once, then every 100 ms
		Log, Handled                                   []string
	}
	run := func(impl string) (o outcome) {
		synctest.Test(t, func(t *testing.T) {
			contextual := &dt.Log{}
			ctx := klog.NewContext(context.Background(), dt.InfoLogger(contextual))
			start := time.Now()
			later := func() bool { o.Polls++; return time.Since(start) >= 250*time.Millisecond }
			never := func() bool { o.Polls++; return false }
			gone, cancel := context.WithTimeout(ctx, 350*time.Millisecond)
			defer cancel()
			if impl == "cachelab" {
				o.Named = informer.WaitForNamedCacheSync(ctx, nil, "pods-controller", later)
				o.NamedCtx = informer.WaitForNamedCacheSyncWithContext(ctx, nil, later, later)
				o.NamedGivesUp = informer.WaitForNamedCacheSync(gone, nil, "pods-controller", later, never)
				o.NamedCtxGivesUp = informer.WaitForNamedCacheSyncWithContext(gone, nil, never)
			} else {
				o.Named = cache.WaitForNamedCacheSync("pods-controller", ctx.Done(), later)
				o.NamedCtx = cache.WaitForNamedCacheSyncWithContext(ctx, later, later)
				o.NamedGivesUp = cache.WaitForNamedCacheSync("pods-controller", gone.Done(), later, never)
				o.NamedCtxGivesUp = cache.WaitForNamedCacheSyncWithContext(gone, never)
			}
			for _, l := range global.Take() {
				o.Log = append(o.Log, "global: "+l)
			}
			for _, l := range contextual.Take() {
				o.Log = append(o.Log, "ctx: "+l)
			}
			o.Handled = handled.Take()
		})
		return o
	}
	cl, cg := run("cachelab"), run("client-go")
	if d := cmp.Diff(cg, cl); d != "" {
		t.Errorf("(-client-go +cachelab):\n%s", d)
	}
	for _, l := range append(cg.Log, cg.Handled...) {
		t.Log(l)
	}
	if !cl.Named || !cl.NamedCtx || cl.NamedGivesUp || cl.NamedCtxGivesUp || len(cl.Handled) != 2 {
		t.Errorf("the script did not exercise both endings: %+v", cl)
	}
}

// client-go: shared_informer.go SyncResult.AsError (P21).
func TestSyncResultAsError(t *testing.T) {
	type pod struct{}
	type node struct{}
	cause := errors.New("context deadline exceeded")
	synced := map[reflect.Type]bool{reflect.TypeFor[*pod](): false, reflect.TypeFor[node](): true, reflect.TypeFor[string](): false}
	for _, err := range []error{nil, cause} {
		a := informer.SyncResult{Err: err, Synced: synced}.AsError()
		b := cache.SyncResult{Err: err, Synced: synced}.AsError()
		if fmt.Sprint(a) != fmt.Sprint(b) || errors.Is(a, cause) != errors.Is(b, cause) {
			t.Errorf("AsError: cachelab %v, client-go %v", a, b)
		}
	}
}
