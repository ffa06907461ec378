package controllertest

import (
	"context"
	"errors"
	"runtime/pprof"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/internal/goroutines"
)

// The waits of the wall clock the settle knows are known by client-go
// v0.37.2's own frames: a reflector whose LIST fails backs off (a
// backoff, which the world waits out before it lets an event go), and
// WaitForCacheSync polls (a poll, which lets the next event go). A
// client-go whose frames moved would fail here, not silently in a
// settle.
func TestRealWaitsAreKnown(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	failing := &cache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			return nil, errors.New("no server")
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			return nil, errors.New("no server")
		},
	}
	r := cache.NewReflector(failing, &corev1.ConfigMap{}, cache.NewStore(cache.MetaNamespaceKeyFunc), 0)
	go pprof.Do(ctx, pprof.Labels("realwait", "reflector"), func(ctx context.Context) { r.RunWithContext(ctx) })
	go pprof.Do(ctx, pprof.Labels("realwait", "poll"), func(ctx context.Context) {
		cache.WaitForCacheSync(ctx.Done(), func() bool { return false })
	})
	want := map[string]waitKind{"reflector": backingOff, "poll": polling}
	deadline := time.Now().Add(10 * time.Second)
	for len(want) > 0 {
		goroutines.ShowLabels()
		for _, g := range goroutines.All() {
			which := goroutines.Label(g, "realwait")
			if kind, ok := want[which]; ok && goroutines.Parked(goroutines.State(g)) {
				if what, got := realWait(g); got == kind {
					t.Logf("%s: %s", which, what)
					delete(want, which)
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("not seen in 10 s as the wait they are: %v", want)
		}
		time.Sleep(time.Millisecond) // a look at goroutines that run on their own; nothing else tells when they park
	}
}
