package controller

import (
	"context"
	"testing"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	"github.com/cachelab/cachelab/workqueue"
)

// An object the key function refuses is reported and dropped, never
// queued (K1): sample-controller's enqueue does the same.
func TestUnkeyableObjectIsDropped(t *testing.T) {
	var reported []error
	defer func(hs []utilruntime.ErrorHandler) { utilruntime.ErrorHandlers = hs }(utilruntime.ErrorHandlers)
	utilruntime.ErrorHandlers = []utilruntime.ErrorHandler{
		func(_ context.Context, err error, _ string, _ ...any) { reported = append(reported, err) },
	}
	var events []Event
	c := &Controller{queue: workqueue.NewRateLimiting[string](workqueue.DefaultControllerRateLimiter[string](), workqueue.Options{}),
		trace: func(e Event) { events = append(events, e) }}
	defer c.queue.ShutDown()
	handler{ctx: context.Background(), c: c}.OnAdd(struct{ ID int }{1}, false)
	if got := c.queue.Len(); got != 0 {
		t.Errorf("queue Len = %d after an unkeyable add, want 0", got)
	}
	if len(reported) != 1 {
		t.Errorf("HandleError heard %d errors, want 1", len(reported))
	}
	if want := (Event{Kind: Unkeyable, Detail: "add"}); len(events) != 1 || events[0].String() != want.String() {
		t.Errorf("trace = %v, want [%v]", events, want)
	}
}
