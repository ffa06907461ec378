package controller_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/cachelab/cachelab/controller"
	"github.com/cachelab/cachelab/informer"
	dt "github.com/cachelab/cachelab/internal/difftest"
)

// One worker's turns, called directly on a fake clock (K2, K3): a failure
// waits exactly its 5ms on the controller's clock, not on the machine's,
// and the next turn blocks until the clock has moved that far.
func TestStepsOnAFakeClock(t *testing.T) {
	server := dt.NewServer()
	server.Write(watch.Added, pod("ns/a"))
	inf := informer.New(server, informer.Options{Stack: informer.Default, ExampleObject: &unstructured.Unstructured{}})
	clk := testingclock.NewFakeClock(time.Unix(0, 0))
	var mu sync.Mutex
	var events []string
	calls := 0
	c, err := controller.New(context.Background(), controller.Options{Informer: inf, Clock: clk,
		Reconcile: func(context.Context, string) (controller.Result, error) {
			if calls++; calls == 1 {
				return controller.Result{}, errors.New("not yet")
			}
			return controller.Result{}, nil
		},
		Trace: func(e controller.Event) { mu.Lock(); events = append(events, e.String()); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { inf.Run(ctx) })
	defer func() { cancel(); c.Queue().ShutDown(); wg.Wait() }()
	informer.WaitFor(ctx, "", c.HasSyncedChecker())

	c.ProcessNextWorkItem(ctx) // fails
	if got := c.Queue().Len(); got != 0 {
		t.Fatalf("Len = %d right after the failure, want 0: the key waits 5ms", got)
	}
	clk.Step(4 * time.Millisecond)
	if got := c.Queue().Waiting(); got != 1 {
		t.Fatalf("Waiting = %d at 4ms, want 1", got)
	}
	clk.Step(time.Millisecond)
	c.ProcessNextWorkItem(ctx) // returns once the delaying loop has added the key
	mu.Lock()
	defer mu.Unlock()
	want := []string{"handler: enqueue ns/a add", "workqueue: get ns/a", "reconcile: returned ns/a error \"not yet\"",
		"workqueue: requeue-rate-limited ns/a 5ms", "workqueue: done ns/a",
		"workqueue: get ns/a", "reconcile: returned ns/a ok", "workqueue: forget ns/a", "workqueue: done ns/a"}
	if d := dt.Diff(events, want); d != "" {
		t.Errorf("trace (-want +got):\n%s", d)
	}
}
